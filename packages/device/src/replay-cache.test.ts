import { describe, expect, it } from 'vitest';
import { ReplayCache } from './replay-cache.js';

describe('ReplayCache', () => {
  it('refuses a key again within two minutes and takes it after', () => {
    const cache = new ReplayCache();
    expect(cache.use('jti:a', 0)).toBe(true);
    expect(cache.use('jti:a', 119_999)).toBe(false);
    expect(cache.has('jti:a', 119_999)).toBe(true);
    expect(cache.use('jti:a', 120_000)).toBe(true);
  });

  it('forgets expired keys, so it does not grow without bound', () => {
    const cache = new ReplayCache(1000);
    for (let i = 0; i < 100; i++) cache.use(`k${i}`, i);
    expect(cache.size).toBe(100);
    cache.use('late', 5000);
    expect(cache.size).toBe(1);
  });

  it('holds at most its maximum, dropping the oldest', () => {
    const cache = new ReplayCache(60_000, 3);
    for (const key of ['a', 'b', 'c', 'd']) cache.use(key, 0);
    expect(cache.size).toBe(3);
    expect(cache.has('a', 1)).toBe(false);
    expect(cache.has('d', 1)).toBe(true);
  });
});
