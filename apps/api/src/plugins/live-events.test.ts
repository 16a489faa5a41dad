import { describe, expect, it, vi } from 'vitest';
import type { Lock, LockLogEntry } from '@latchkey/contract';
import type { ListenHandlers } from '../db/client.js';
import { LiveEvents, LOCKS_CHANNEL, type LiveEvent } from './live-events.js';

/** The fan-out's own rules, with the channel driven by hand (the API tests drive it with real databases). */
function setUp(delays: Record<string, number> = {}) {
  let handlers: ListenHandlers | undefined;
  const reads: string[] = [];
  const live = new LiveEvents(
    {
      listen: async (channel, h) => {
        expect(channel).toBe(LOCKS_CHANNEL);
        handlers = h;
        h.up();
        return async () => {};
      },
    },
    {
      lock: async (id) => {
        reads.push(`lock ${id}`);
        await new Promise((r) => setTimeout(r, delays[id] ?? 0));
        return id === 'gone' ? null : ({ id, name: id } as unknown as Lock);
      },
      activity: async (id) => {
        reads.push(`activity ${id}`);
        return { id } as unknown as LockLogEntry;
      },
    },
    { warn: () => {} },
  );
  return { live, reads, notice: (payload: string) => handlers!.message(payload), handlers: () => handlers! };
}

describe('live events', () => {
  it('reads a changed row once for all of an application’s subscribers, in notice order, and none for others', async () => {
    const { live, reads, notice } = setUp({ slow: 30 });
    await live.start();
    const a: LiveEvent[] = [];
    const b: LiveEvent[] = [];
    live.subscribe('app1', (e) => a.push(e));
    const stopB = live.subscribe('app1', (e) => b.push(e));
    notice('app1 slow lock');
    notice('app1 l1 activity e1');
    notice('app2 other lock');
    notice('app1 gone lock');
    notice('app1 l1 share u1');
    // The slow read holds back what follows it: wait for the last notice's event, however loaded the host.
    await vi.waitFor(() => expect(a).toHaveLength(4), { timeout: 10_000, interval: 5 });
    expect(reads).toEqual(['lock slow', 'activity e1', 'lock gone']);
    expect(a.map((e) => e.event)).toEqual(['lock', 'activity', 'lock-removed', 'share']);
    expect(a[3]!.data).toBe('{"lockId":"l1","userId":"u1"}');
    expect(b).toEqual(a);
    stopB();
    expect(live.size).toBe(1);
  });

  it('tells subscribers to read everything again after the feed was down', async () => {
    const { live, handlers } = setUp();
    await live.start();
    const got: LiveEvent[] = [];
    live.subscribe('app1', (e) => got.push(e));
    handlers().up();
    expect(got).toEqual([]);
    handlers().down();
    handlers().up();
    expect(got).toEqual([{ event: 'resync', data: '{}' }]);
  });
});
