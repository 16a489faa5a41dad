import { describe, expect, it } from 'vitest';
import { backoffMs, createSseParser, type SseMessage } from './sse';

function parseAll(chunks: string[]): SseMessage[] {
  const out: SseMessage[] = [];
  const feed = createSseParser((m) => out.push(m));
  for (const chunk of chunks) feed(chunk);
  return out;
}

describe('createSseParser', () => {
  it('yields one message per blank-line-terminated event, with its name and data', () => {
    expect(parseAll(['event: lock\ndata: {"id":"a"}\n\nevent: activity\ndata: {"id":"b"}\n\n'])).toEqual([
      { event: 'lock', data: '{"id":"a"}' },
      { event: 'activity', data: '{"id":"b"}' },
    ]);
  });

  it('reassembles events split across chunks anywhere, CRLF line ends included', () => {
    const text = 'event: lock\r\ndata: {"id":"a"}\r\n\r\nevent: activity\ndata: {"id":"b"}\n\n';
    const whole = parseAll([text]);
    for (let cut = 1; cut < text.length; cut++)
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual(whole);
    expect(whole).toHaveLength(2);
  });

  it('skips keep-alive comments and ignores unknown fields; joins multi-line data; defaults the name', () => {
    expect(parseAll([': keep-alive\n\nid: 7\nretry: 100\ndata: one\ndata: two\n\n'])).toEqual([
      { event: 'message', data: 'one\ntwo' },
    ]);
  });

  it('does not dispatch an event until its blank line arrives', () => {
    expect(parseAll(['event: lock\ndata: {}\n'])).toEqual([]);
  });
});

describe('backoffMs', () => {
  it('doubles from about a second up to half a minute, with jitter in the upper half', () => {
    expect(backoffMs(0, () => 0)).toBe(500);
    expect(backoffMs(0, () => 1)).toBe(1000);
    expect(backoffMs(3, () => 1)).toBe(8000);
    expect(backoffMs(20, () => 1)).toBe(30_000);
    expect(backoffMs(20, () => 0)).toBe(15_000);
  });
});
