import { describe, expect, it } from 'vitest';
import { operationErrors, type TimeRule } from '@latchkey/contract';
import { checkUsageRequirements, haversineMetres, isWithinTimeRule, localTime, meetsAccuracyTier } from '@latchkey/contract';
import { checkShareTerms } from './rules.js';

const at = (iso: string) => Date.parse(iso);
const rule = (start: string, end: string, timezone: string, days: TimeRule['days']): TimeRule => ({ start, end, timezone, days });
/** A check's problem: the reason's catalogue key, decided by the check, with the catalogue's text. */
const problem = (key: keyof typeof operationErrors) => ({ key, message: operationErrors[key] });

describe('time windows in IANA zones', () => {
  it('reads the local day and minute, daylight saving included', () => {
    // 2026-07-01 is a Wednesday; London is on BST (UTC+1), New York on EDT (UTC-4).
    expect(localTime(at('2026-07-01T08:30:00Z'), 'Europe/London')).toEqual({ day: 'WEDNESDAY', minute: 9 * 60 + 30 });
    expect(localTime(at('2026-07-01T02:00:00Z'), 'America/New_York')).toEqual({ day: 'TUESDAY', minute: 22 * 60 });
    expect(localTime(at('2026-01-07T08:30:00Z'), 'Europe/London')).toEqual({ day: 'WEDNESDAY', minute: 8 * 60 + 30 });
    expect(localTime(at('2026-07-01T20:00:00Z'), 'Asia/Kolkata')).toEqual({ day: 'THURSDAY', minute: 1 * 60 + 30 });
  });

  it('admits the start and refuses the end of a daytime window', () => {
    const office = rule('09:00', '17:00', 'Europe/London', ['WEDNESDAY']);
    expect(isWithinTimeRule(office, at('2026-07-01T08:00:00Z'))).toBe(true); // 09:00 BST
    expect(isWithinTimeRule(office, at('2026-07-01T07:59:00Z'))).toBe(false);
    expect(isWithinTimeRule(office, at('2026-07-01T15:59:00Z'))).toBe(true);
    expect(isWithinTimeRule(office, at('2026-07-01T16:00:00Z'))).toBe(false); // 17:00 BST
    expect(isWithinTimeRule(office, at('2026-07-02T08:00:00Z'))).toBe(false); // Thursday
  });

  it('runs a window across midnight on the day it starts', () => {
    const night = rule('22:00', '06:00', 'America/New_York', ['FRIDAY']);
    expect(isWithinTimeRule(night, at('2026-07-04T02:30:00Z'))).toBe(true); // Fri 22:30 EDT
    expect(isWithinTimeRule(night, at('2026-07-04T09:59:00Z'))).toBe(true); // Sat 05:59 EDT
    expect(isWithinTimeRule(night, at('2026-07-04T10:00:00Z'))).toBe(false); // Sat 06:00 EDT
    expect(isWithinTimeRule(night, at('2026-07-03T09:00:00Z'))).toBe(false); // Fri 05:00: Thursday's night is not listed
    expect(isWithinTimeRule(night, at('2026-07-05T03:00:00Z'))).toBe(false); // Sat 23:00
  });

  it('treats an equal start and end as the whole day', () => {
    expect(isWithinTimeRule(rule('00:00', '00:00', 'UTC', ['SUNDAY']), at('2026-07-05T23:59:00Z'))).toBe(true);
    expect(isWithinTimeRule(rule('00:00', '00:00', 'UTC', ['SUNDAY']), at('2026-07-06T00:00:00Z'))).toBe(false);
  });

  it('judges the same instant by each zone', () => {
    const instant = at('2026-07-01T23:30:00Z'); // Wed 23:30 UTC = Thu 08:30 Tokyo = Wed 16:30 Los Angeles
    expect(isWithinTimeRule(rule('08:00', '09:00', 'Asia/Tokyo', ['THURSDAY']), instant)).toBe(true);
    expect(isWithinTimeRule(rule('08:00', '09:00', 'America/Los_Angeles', ['THURSDAY']), instant)).toBe(false);
    expect(isWithinTimeRule(rule('16:00', '17:00', 'America/Los_Angeles', ['WEDNESDAY']), instant)).toBe(true);
  });
});

describe('share terms', () => {
  const now = at('2026-07-01T12:00:00Z');
  it('holds between the bounds and inside the window', () => {
    expect(checkShareTerms({ start: now - 1000, end: now + 1000, timeWindow: null }, now)).toBeNull();
    expect(checkShareTerms({ start: now + 1000, end: null, timeWindow: null }, now)).toEqual(problem('shareNotStarted'));
    expect(checkShareTerms({ start: null, end: now, timeWindow: null }, now)).toEqual(problem('shareEnded'));
    expect(checkShareTerms({ start: null, end: null, timeWindow: rule('13:00', '14:00', 'Europe/Paris', ['WEDNESDAY']) }, now)).toEqual(problem('shareWindow'));
    expect(checkShareTerms({ start: null, end: null, timeWindow: rule('14:00', '15:00', 'Europe/Paris', ['WEDNESDAY']) }, now)).toBeNull();
  });

  it('refuses a window in a zone the runtime does not know', () => {
    expect(checkShareTerms({ start: null, end: null, timeWindow: rule('00:00', '23:59', 'Mars/Olympus_Mons', ['WEDNESDAY']) }, now)).toEqual(problem('unknownTimeZone'));
  });
});

describe('location', () => {
  it('measures great-circle distance', () => {
    // One degree of latitude is about 111.2 km; London to Paris about 343.5 km.
    expect(haversineMetres({ latitude: 0, longitude: 0 }, { latitude: 1, longitude: 0 })).toBeCloseTo(111_195, -1);
    expect(haversineMetres({ latitude: 51.5074, longitude: -0.1278 }, { latitude: 48.8566, longitude: 2.3522 }) / 1000).toBeCloseTo(343.5, 0);
    expect(haversineMetres({ latitude: 10, longitude: 179.9999 }, { latitude: 10, longitude: -179.9999 })).toBeLessThan(30);
    expect(haversineMetres({ latitude: 90, longitude: 0 }, { latitude: -90, longitude: 0 })).toBeCloseTo(Math.PI * 6_371_008.8, -1);
  });

  it('applies the location accuracy tiers', () => {
    expect(meetsAccuracyTier('FINE', 10)).toBe(true);
    expect(meetsAccuracyTier('FINE', 10.5)).toBe(false);
    expect(meetsAccuracyTier('HIGH', 20)).toBe(true);
    expect(meetsAccuracyTier('MEDIUM', 100)).toBe(true);
    expect(meetsAccuracyTier('MEDIUM', 150)).toBe(false);
    expect(meetsAccuracyTier('LOW', 500)).toBe(true);
    expect(meetsAccuracyTier('LOW', 501)).toBe(false);
  });

  const door = { latitude: 51.5, longitude: -0.12, radius: 50, accuracy: 'HIGH' as const, enabled: true };
  const now = at('2026-07-01T12:00:00Z');
  it('needs a close and accurate enough position when the rule is enabled', () => {
    expect(checkUsageRequirements({ location: door }, undefined, now)).toEqual(problem('locationRequired'));
    expect(checkUsageRequirements({ location: door }, { latitude: 51.5, longitude: -0.12, accuracy: 5 }, now)).toBeNull();
    expect(checkUsageRequirements({ location: door }, { latitude: 51.5003, longitude: -0.12, accuracy: 5 }, now)).toBeNull(); // ~33 m
    expect(checkUsageRequirements({ location: door }, { latitude: 51.501, longitude: -0.12, accuracy: 5 }, now)).toEqual({
      key: 'locationTooFar',
      message: expect.stringMatching(/^You are too far from the lock \(111 m away/),
    });
    expect(checkUsageRequirements({ location: door }, { latitude: 51.5, longitude: -0.12, accuracy: 25 }, now)).toEqual({
      key: 'locationInaccurate',
      message: expect.stringMatching(/^Your location is not accurate enough/),
    });
    expect(checkUsageRequirements({ location: { ...door, enabled: false } }, undefined, now)).toBeNull();
  });

  it('checks the lock hours before the location', () => {
    const closed = { time: [rule('01:00', '02:00', 'UTC', ['WEDNESDAY'])], location: door };
    expect(checkUsageRequirements(closed, undefined, now)).toEqual(problem('lockHours'));
    expect(checkUsageRequirements({ time: [] }, undefined, now)).toBeNull();
  });
});
