import { describe, expect, it } from 'vitest';
import { ApplicationBodyCache } from './application-cache.js';

describe('ApplicationBodyCache', () => {
  it('answers only for the version it holds', () => {
    const cache = new ApplicationBodyCache();
    cache.set('a', 3, '{"v":3}');
    expect(cache.get('a', 3)).toBe('{"v":3}');
    expect(cache.get('a', 4)).toBeUndefined();
    expect(cache.get('b', 3)).toBeUndefined();
  });

  it('drops an entry once a newer version is asked for, and never goes back to an older body', () => {
    const cache = new ApplicationBodyCache();
    cache.set('a', 3, 'three');
    expect(cache.get('a', 4)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set('a', 5, 'five');
    cache.set('a', 4, 'four (a slower reader)');
    expect(cache.get('a', 5)).toBe('five');
    expect(cache.get('a', 4)).toBeUndefined();
  });

  it('stays within its size, evicting the least recently stored', () => {
    const cache = new ApplicationBodyCache(2);
    cache.set('a', 1, 'a');
    cache.set('b', 1, 'b');
    cache.set('c', 1, 'c');
    expect(cache.size).toBe(2);
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('c', 1)).toBe('c');
  });
});
