import { describe, expect, it } from 'vitest';
import { Gate } from './passwords.js';

describe('Gate', () => {
  it('never runs more than its size at once, and runs every task in order', async () => {
    const gate = new Gate(2);
    let inFlight = 0;
    let peak = 0;
    const started: number[] = [];
    const task = (n: number) => async () => {
      started.push(n);
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return n;
    };
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => gate.run(task(n))));
    expect(results).toEqual([1, 2, 3, 4, 5, 6]);
    expect(peak).toBe(2);
    // Waiting tasks start first come, first served: a last-in-first-out gate would start 1, 2, 6, 5, 4, 3.
    expect(started).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('frees its slot when a task fails', async () => {
    const gate = new Gate(1);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run(async () => 'next')).resolves.toBe('next');
  });
});
