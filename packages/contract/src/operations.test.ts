import { describe, expect, it } from 'vitest';
import { certificateRequestSchema, operationSchema } from './operations.js';
import { operationErrors } from './sandbox-texts.js';

const parse = (value: unknown) => operationSchema.safeParse(value);
const USER = '7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f';

describe('operation payloads', () => {
  it('accepts the four operations as the SDKs send them', () => {
    expect(parse({ type: 'MUTATE_LOCK', locked: false }).success).toBe(true);
    expect(parse({ type: 'MUTATE_LOCK', locked: false, duration: 7 }).success).toBe(true);
    expect(parse({ type: 'ADD_USER', user: USER, publicKey: 'AAAA', role: 'ADMIN', start: 1, end: 2 }).data).toMatchObject({ role: 'ADMIN' });
    expect(parse({ type: 'ADD_USER', user: USER }).data).toMatchObject({ role: 'USER' });
    expect(parse({ type: 'REMOVE_USER', users: [USER] }).success).toBe(true);
    const between = { start: '22:00', end: '06:00', timezone: 'Europe/London', days: ['MONDAY'], exceptions: [] };
    expect(parse({ type: 'MUTATE_SETTING', unlockDuration: 10, unlockBetween: between }).success).toBe(true);
  });

  it('refuses unknown types, bad durations, zones and coordinates', () => {
    expect(parse({ type: 'SELF_DESTRUCT' }).success).toBe(false);
    expect(parse({ type: 'MUTATE_LOCK', locked: false, duration: 61 }).error?.issues[0]?.message).toBe(operationErrors.durationRange);
    const badZone = { start: '08:00', end: '09:00', timezone: 'Mars/Olympus', days: ['MONDAY'] };
    expect(parse({ type: 'MUTATE_SETTING', unlockBetween: badZone }).success).toBe(false);
    const noDays = { start: '08:00', end: '09:00', timezone: 'UTC', days: [] };
    expect(parse({ type: 'MUTATE_SETTING', unlockBetween: noDays }).error?.issues[0]?.message).toBe('Select minimum 1 day');
    expect(parse({ type: 'MUTATE_LOCK', locked: false, location: { latitude: 91, longitude: 0, accuracy: 5 } }).success).toBe(false);
    expect(parse({ type: 'REMOVE_USER', users: ['not-a-uuid'] }).success).toBe(false);
  });

  it('bounds the certificate request', () => {
    expect(certificateRequestSchema.safeParse({ ephemeralKey: '' }).success).toBe(false);
    expect(certificateRequestSchema.safeParse({ ephemeralKey: 'x'.repeat(600) }).success).toBe(false);
  });
});
