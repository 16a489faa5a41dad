import { describe, expect, it } from 'vitest';
import { FixedWindows } from './rate-limit.js';

describe('fixed windows of the in-memory rate limit', () => {
  it('allows max requests in a window, refuses the ones after, and starts afresh when the window ends', () => {
    const windows = new FixedWindows(60_000);
    const hits = Array.from({ length: 4 }, (_, i) => windows.hit('u:a', 3, 1_000 + i));
    expect(hits.map((h) => h.isExceeded)).toEqual([false, false, false, true]);
    expect(hits[3]).toMatchObject({ max: 3, ttlInSeconds: 60 });
    expect(windows.hit('u:a', 3, 31_000)).toMatchObject({ isExceeded: true, ttlInSeconds: 30 });
    // Another key has its own window.
    expect(windows.hit('u:b', 3, 31_000).isExceeded).toBe(false);
    // The window began at 1,000: from 61,000 on it is a new one.
    expect(windows.hit('u:a', 3, 60_999).isExceeded).toBe(true);
    expect(windows.hit('u:a', 3, 61_000)).toMatchObject({ isExceeded: false, ttlInSeconds: 60 });
  });

  it('keeps at most maxKeys keys: ended windows go first, then the one that ends soonest', () => {
    const windows = new FixedWindows(60_000, 3);
    windows.hit('old', 1, 0);
    windows.hit('a', 1, 10_000);
    windows.hit('b', 1, 20_000);
    // At 65,000 the window of `old` has ended: it makes room, and `a` and `b` keep their counts.
    windows.hit('c', 1, 65_000);
    expect(windows.size).toBe(3);
    expect(windows.hit('a', 1, 65_000).isExceeded).toBe(true);
    expect(windows.hit('b', 1, 65_000).isExceeded).toBe(true);
    // None has ended now: `a` (the soonest to end) goes for `d`, so its next request starts a new window.
    windows.hit('d', 1, 66_000);
    expect(windows.size).toBe(3);
    expect(windows.hit('b', 1, 66_000).isExceeded).toBe(true);
    expect(windows.hit('a', 1, 66_000).isExceeded).toBe(false);
  });
});
