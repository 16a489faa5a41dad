import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationErrors, type TimeRule, type UsageRequirements } from '@latchkey/contract';
import { verifyOperation } from './checks.js';
import { ReplayCache } from './replay-cache.js';
import { checkUsageRequirements, isWithinTimeRule } from '@latchkey/contract';
import { configUser, createTestCa, issueLeaf, signOperation, testConfig, unlockClaims, type TestCa, type TestUser } from './test-fixture.js';

const weekdays: TimeRule['days'] = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'];
const officeHoursNewYork: TimeRule = { start: '09:00', end: '17:00', timezone: 'America/New_York', days: weekdays };
const fridayNightBerlin: TimeRule = { start: '22:00', end: '06:00', timezone: 'Europe/Berlin', days: ['FRIDAY'] };
/** A check's problem: the reason's catalogue key, decided by the check, with the catalogue's text. */
const problem = (key: keyof typeof operationErrors) => ({ key, message: operationErrors[key] });

describe('time rules, in the rule’s own zone', () => {
  it('admit 10:00 in New York on a Monday (15:00 UTC) and refuse 18:00 there (23:00 UTC)', () => {
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 0, 5, 15, 0))).toBe(true);
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 0, 5, 23, 0))).toBe(false);
    // Monday 02:00 UTC is still Sunday evening in New York.
    expect(isWithinTimeRule({ ...officeHoursNewYork, start: '20:00', end: '23:00' }, Date.UTC(2026, 0, 5, 2, 0))).toBe(false);
    expect(isWithinTimeRule({ ...officeHoursNewYork, start: '20:00', end: '23:00', days: ['SUNDAY'] }, Date.UTC(2026, 0, 5, 2, 0))).toBe(true);
  });

  it('start inclusive, end exclusive, and summer time followed', () => {
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 0, 5, 14, 0))).toBe(true);
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 0, 5, 22, 0))).toBe(false);
    // In July New York is UTC−4: 13:00 UTC is 09:00 there.
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 6, 6, 13, 0))).toBe(true);
    expect(isWithinTimeRule(officeHoursNewYork, Date.UTC(2026, 6, 6, 12, 59))).toBe(false);
  });

  it('a window past midnight belongs to the day it starts on', () => {
    // Friday 9 Jan 2026; Berlin is UTC+1 in winter.
    expect(isWithinTimeRule(fridayNightBerlin, Date.UTC(2026, 0, 9, 21, 0))).toBe(true); // Fri 22:00
    expect(isWithinTimeRule(fridayNightBerlin, Date.UTC(2026, 0, 10, 4, 59))).toBe(true); // Sat 05:59
    expect(isWithinTimeRule(fridayNightBerlin, Date.UTC(2026, 0, 10, 5, 0))).toBe(false); // Sat 06:00
    expect(isWithinTimeRule(fridayNightBerlin, Date.UTC(2026, 0, 8, 23, 0))).toBe(false); // Fri 00:00, Thursday's night
  });

  it('equal start and end admit the whole of each listed day', () => {
    expect(isWithinTimeRule({ start: '00:00', end: '00:00', timezone: 'Asia/Tokyo', days: ['SATURDAY'] }, Date.UTC(2026, 0, 9, 15, 30))).toBe(true);
    expect(isWithinTimeRule({ start: '00:00', end: '00:00', timezone: 'Asia/Tokyo', days: ['SATURDAY'] }, Date.UTC(2026, 0, 9, 14, 30))).toBe(false);
  });
});

describe('usage requirements', () => {
  const berlin = { latitude: 52.52, longitude: 13.405, radius: 100, accuracy: 'MEDIUM' as const, enabled: true };

  it('refuse outside every time rule, and with a zone this runtime does not know', () => {
    const at = Date.UTC(2026, 0, 5, 23, 0);
    expect(checkUsageRequirements({ time: [officeHoursNewYork] }, undefined, at)).toEqual(problem('lockHours'));
    expect(checkUsageRequirements({ time: [officeHoursNewYork, { ...officeHoursNewYork, start: '17:00', end: '19:00' }] }, undefined, at)).toBeNull();
    expect(checkUsageRequirements({ time: [{ ...officeHoursNewYork, timezone: 'Mars/Olympus' }] }, undefined, at)).toEqual(problem('unknownTimeZone'));
  });

  it('need a location when the rule is on, accurate enough and within the radius', () => {
    const rules: UsageRequirements = { location: berlin };
    expect(checkUsageRequirements(rules, undefined, Date.now())).toEqual(problem('locationRequired'));
    expect(checkUsageRequirements({ location: { ...berlin, enabled: false } }, undefined, Date.now())).toBeNull();
    expect(checkUsageRequirements(rules, { latitude: 52.52, longitude: 13.405, accuracy: 101 }, Date.now())).toEqual({
      key: 'locationInaccurate',
      message: expect.stringMatching(new RegExp(`^${operationErrors.locationInaccurate} `)),
    });
    // 0.001° of latitude is about 111 m.
    expect(checkUsageRequirements(rules, { latitude: 52.521, longitude: 13.405, accuracy: 10 }, Date.now())).toEqual({
      key: 'locationTooFar',
      message: `${operationErrors.locationTooFar} (111 m away; the lock allows 100 m)`,
    });
    expect(checkUsageRequirements(rules, { latitude: 52.5208, longitude: 13.405, accuracy: 10 }, Date.now())).toBeNull();
  });
});

describe('verifyOperation applies them from the config', () => {
  const LOCK = randomUUID();
  let ca: TestCa;
  let alice: TestUser;
  // Valid from 2020 to 2040, so operations can be signed at fixed instants.
  beforeAll(async () => {
    ca = await createTestCa();
    alice = await issueLeaf(ca, { notBefore: Date.UTC(2020, 0, 1), notAfter: Date.UTC(2040, 0, 1) });
  });
  const at = (now: number, users = [configUser(alice)], usageRequirements: UsageRequirements = {}, claims: Record<string, unknown> = {}) => {
    const verdict = verifyOperation(signOperation(alice, unlockClaims(alice, LOCK, now, claims)), {
      config: testConfig(LOCK, users, { usageRequirements }),
      lockId: LOCK,
      platformCa: ca.trust,
      now,
      replayCache: new ReplayCache(),
    });
    return verdict.ok ? 'accepted' : verdict.reason;
  };

  it('a user’s bounds: the start inclusive, the end exclusive, to the millisecond', () => {
    const start = Date.UTC(2026, 2, 1) / 1000;
    const end = start + 3600;
    const users = [configUser(alice, { start, end })];
    expect(at(start * 1000 - 1, users)).toBe(operationErrors.shareNotStarted);
    expect(at(start * 1000, users)).toBe('accepted');
    expect(at(end * 1000 - 1, users)).toBe('accepted');
    expect(at(end * 1000, users)).toBe(operationErrors.shareEnded);
  });

  it('the lock’s hours in New York', () => {
    expect(at(Date.UTC(2026, 0, 5, 15, 0), undefined, { time: [officeHoursNewYork] })).toBe('accepted');
    expect(at(Date.UTC(2026, 0, 5, 23, 0), undefined, { time: [officeHoursNewYork] })).toBe(operationErrors.lockHours);
  });

  it('a user’s own window across midnight in Berlin', () => {
    const users = [configUser(alice, { timeWindow: fridayNightBerlin })];
    expect(at(Date.UTC(2026, 0, 10, 4, 59), users)).toBe('accepted');
    expect(at(Date.UTC(2026, 0, 10, 5, 0), users)).toBe(operationErrors.shareWindow);
  });

  it('the lock’s hours and location bind unlocks only: an admin’s share is not refused by them', () => {
    const users = [configUser(alice, { role: 'ADMIN' })];
    const closed = { time: [officeHoursNewYork], location: { latitude: 0, longitude: 0, radius: 1, accuracy: 'FINE' as const, enabled: true } };
    expect(at(Date.UTC(2026, 0, 5, 23, 0), users, closed, { operation: { type: 'REMOVE_USER', users: [randomUUID()] } })).toBe('accepted');
    expect(at(Date.UTC(2026, 0, 5, 23, 0), users, closed)).toBe(operationErrors.lockHours);
  });

  it('the location rule: missing, too far, inside', () => {
    const near = { location: { latitude: 48.8584, longitude: 2.2945, radius: 50, accuracy: 'HIGH' as const, enabled: true } };
    const now = Date.UTC(2026, 3, 1, 12);
    expect(at(now, undefined, near)).toBe(operationErrors.locationRequired);
    expect(at(now, undefined, near, { operation: { type: 'MUTATE_LOCK', locked: false, location: { latitude: 48.86, longitude: 2.2945, accuracy: 5 } } })).toMatch(
      new RegExp(`^${operationErrors.locationTooFar} `),
    );
    expect(at(now, undefined, near, { operation: { type: 'MUTATE_LOCK', locked: false, location: { latitude: 48.8585, longitude: 2.2945, accuracy: 5 } } })).toBe('accepted');
  });
});
