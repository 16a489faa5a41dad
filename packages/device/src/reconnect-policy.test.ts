import { describe, expect, it } from 'vitest';
import { RECONNECT_BASE_MS, RECONNECT_MAX_MS, reconnectDelayMs } from './reconnect-policy.js';

describe('the reconnect backoff', () => {
  it('doubles with every failure in a row up to the longest wait, and waits between half of it and all of it', () => {
    expect(reconnectDelayMs(0, RECONNECT_BASE_MS, RECONNECT_MAX_MS, () => 1)).toBe(RECONNECT_BASE_MS);
    expect(reconnectDelayMs(0, RECONNECT_BASE_MS, RECONNECT_MAX_MS, () => 0)).toBe(RECONNECT_BASE_MS / 2);
    expect(reconnectDelayMs(3, RECONNECT_BASE_MS, RECONNECT_MAX_MS, () => 1)).toBe(8 * RECONNECT_BASE_MS);
    expect(reconnectDelayMs(30, RECONNECT_BASE_MS, RECONNECT_MAX_MS, () => 1)).toBe(RECONNECT_MAX_MS);
    expect(reconnectDelayMs(30, RECONNECT_BASE_MS, RECONNECT_MAX_MS, () => 0)).toBe(RECONNECT_MAX_MS / 2);
  });

  it('spreads devices that failed together over the whole range', () => {
    const waits = Array.from({ length: 1000 }, () => reconnectDelayMs(4));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(8 * RECONNECT_BASE_MS);
    expect(Math.max(...waits)).toBeLessThanOrEqual(16 * RECONNECT_BASE_MS);
    expect(new Set(waits.map((w) => Math.floor(w / RECONNECT_BASE_MS))).size).toBe(8);
  });
});
