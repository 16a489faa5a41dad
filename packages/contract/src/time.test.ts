import { describe, expect, it } from 'vitest';
import { createLockShareSchema, EPOCH_SECONDS_MAX, epochSecondsSchema, isEpochSeconds, lockLogQuerySchema, messages, operationSchema } from './index.js';

const USER = '7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f';
/** What the JavaScript Date cannot hold (±8.64e15 ms), or holds only as a time no one means. */
const EXTREME = [9e15, 1e300, 1e308, -1e308, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER + 2, 253_402_300_800, -1, Infinity, -Infinity, NaN];

describe('times in the contract', () => {
  it('one epoch-seconds schema: 1970 … 9999-12-31T23:59:59Z, finite', () => {
    expect(EPOCH_SECONDS_MAX).toBe(Date.UTC(9999, 11, 31, 23, 59, 59) / 1000);
    for (const ok of [0, -0, 1, 1_700_000_000, 1_700_000_000.5, EPOCH_SECONDS_MAX]) expect(isEpochSeconds(ok), String(ok)).toBe(true);
    for (const bad of EXTREME) {
      expect(isEpochSeconds(bad), String(bad)).toBe(false);
      expect(epochSecondsSchema.safeParse(bad).error?.issues[0]?.message).toBe(messages.timeRange);
    }
    // Every accepted value is a Date a database can store.
    expect(new Date(EPOCH_SECONDS_MAX * 1000).toISOString()).toBe('9999-12-31T23:59:59.000Z');
  });

  it.each(EXTREME)('a share bound of %s is refused', (v) => {
    expect(createLockShareSchema.safeParse({ email: 'a@b.co', start: v }).success).toBe(false);
    expect(createLockShareSchema.safeParse({ email: 'a@b.co', end: v }).success).toBe(false);
  });

  it.each(['9e15', '1e300', '1e308', '-1e308', '1e400', 'NaN', 'Infinity', '-Infinity', '9007199254740993', '0x1p1000'])(
    'a log filter of %j is refused',
    (v) => {
      expect(lockLogQuerySchema.safeParse({ start: v }).success).toBe(false);
      expect(lockLogQuerySchema.safeParse({ end: v }).success).toBe(false);
    },
  );

  it('keeps ordinary log filters and share bounds', () => {
    expect(lockLogQuerySchema.safeParse({ start: '1700000000', end: '1700000100.25' }).data).toMatchObject({ start: 1_700_000_000, end: 1_700_000_100.25 });
    expect(createLockShareSchema.safeParse({ email: 'a@b.co', start: 1_700_000_000, end: 1_800_000_000 }).success).toBe(true);
  });

  it.each(EXTREME)('an ADD_USER operation with start or end %s is refused', (v) => {
    expect(operationSchema.safeParse({ type: 'ADD_USER', user: USER, start: v }).success).toBe(false);
    expect(operationSchema.safeParse({ type: 'ADD_USER', user: USER, end: v }).success).toBe(false);
  });
});
