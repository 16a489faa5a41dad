import { describe, expect, it } from 'vitest';
import { LruCache } from './lru.js';

describe('LruCache', () => {
  it('evicts the least recently used entry', () => {
    const c = new LruCache<string, number>(2);
    c.set('a', 1).set('b', 2);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.get('c')).toBe(3);
    expect(c.size).toBe(2);
  });

  it('overwrites without growing, and deletes and clears', () => {
    const c = new LruCache<string, number>(2);
    c.set('a', 1).set('a', 2);
    expect(c.size).toBe(1);
    expect(c.get('a')).toBe(2);
    expect(c.delete('a')).toBe(true);
    c.set('b', 1);
    c.clear();
    expect(c.size).toBe(0);
  });

  it('refuses a non-positive size', () => {
    expect(() => new LruCache(0)).toThrow(RangeError);
  });
});
