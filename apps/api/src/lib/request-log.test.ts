import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { lazyChildLogger } from './request-log.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let children = 0;
  const child = logger.child;
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    children++;
    return child.apply(this, args);
  } as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe('a request’s lazy child logger', () => {
  it('makes no pino child for a request that logs nothing', () => {
    const { logger, children } = capture();
    const log = lazyChildLogger(logger, { reqId: 'r1' }, {});
    expect(log.level).toBe('info');
    expect(children()).toBe(0);
  });

  it('logs with the request’s bindings once something is logged, making the child once', () => {
    const { logger, lines, children } = capture();
    const log = lazyChildLogger(logger, { reqId: 'r2' }, {});
    log.info({ a: 1 }, 'first');
    log.error('second');
    log.debug('below the level');
    expect(children()).toBe(1);
    expect(lines.map(({ reqId, msg, a }) => ({ reqId, msg, a }))).toEqual([
      { reqId: 'r2', msg: 'first', a: 1 },
      { reqId: 'r2', msg: 'second', a: undefined },
    ]);
    log.child({ more: true }).warn('third');
    expect(lines[2]).toMatchObject({ reqId: 'r2', more: true, msg: 'third' });
  });

  it('takes a route’s own level', () => {
    const { logger, lines } = capture();
    const log = lazyChildLogger(logger, { reqId: 'r3' }, { level: 'warn' });
    expect(log.level).toBe('warn');
    log.info('quiet');
    log.warn('heard');
    expect(lines.map((l) => l.msg)).toEqual(['heard']);
  });
});
