import { describe, expect, it } from 'vitest';
import i18n from 'i18next';
import { setLanguage } from '../../../app/i18n';
import type { LockLogEntry } from '@latchkey/contract';
import { describeAccess, describeSubject, formatLogTime } from './format';

const at = (d: Date) => d.getTime() / 1000;
const MARCH_5 = at(new Date(2024, 2, 5, 14, 30, 7));

describe('lock page dates, in the reader’s language', () => {
  it('a log entry of today by its time, an older one with its date', () => {
    const sameDay = new Date(2024, 2, 5, 18).getTime();
    expect(formatLogTime(MARCH_5, 'en', sameDay)).toBe('14:30:07');
    expect(formatLogTime(MARCH_5, 'de', sameDay + 86_400_000)).toBe('05.03.2024, 14:30');
    expect(formatLogTime(MARCH_5, 'en', sameDay + 86_400_000)).toBe('05/03/2024, 14:30');
  });

  it('a share’s start and end', async () => {
    await setLanguage('de');
    const text = describeAccess({ start: MARCH_5, end: null, timeWindow: null }, i18n.t, 'de');
    expect(text).toContain('05.03.2024, 14:30');
  });
});

/** The log showed "… for unlockTime" (in German too): the API's field names are words now. */
describe('what a log entry concerned, in the reader’s language', () => {
  const entry = (type: LockLogEntry['type'], subject: string | null) => ({ type, subject });

  it('a settings change from the portal names the settings, not their field names', async () => {
    expect(describeSubject(entry('SETTINGS', 'unlockTime, usageRequirements'), i18n.t)).toBe('changed: unlock time, usage requirements');
    await setLanguage('de');
    expect(describeSubject(entry('SETTINGS', 'unlockTime, usageRequirements'), i18n.t)).toBe('geändert: Öffnungsdauer, Nutzungsbedingungen');
    expect(describeSubject(entry('SETTINGS', 'unlockTime'), i18n.t)).not.toMatch(/unlockTime/);
  });

  it('a settings change from the SDK (PUT /device/{lockId}) names each setting it may write, in both languages', async () => {
    // lock-properties.service writes the changed ones of name, permittedAddresses, hidden, usageRequirements.
    const subject = 'name, permittedAddresses, hidden, usageRequirements';
    await setLanguage('en');
    expect(describeSubject(entry('SETTINGS', subject), i18n.t)).toBe('changed: lock name, permitted IP addresses, visibility, usage requirements');
    await setLanguage('de');
    expect(describeSubject(entry('SETTINGS', subject), i18n.t)).toBe('geändert: Name des Schlosses, zugelassene IP-Adressen, Sichtbarkeit, Nutzungsbedingungen');
    for (const field of ['name', 'permittedAddresses', 'hidden']) expect(describeSubject(entry('SETTINGS', field), i18n.t)).not.toContain(field);
  });

  it('a settings change by a signed operation, a share with its role; an unknown subject as it came', async () => {
    await setLanguage('de');
    expect(describeSubject(entry('SETTINGS', 'unlock time 12 s, hours 08:00–18:00 Europe/Berlin'), i18n.t)).toBe(
      'geändert: Öffnungsdauer 12 s, Zeiten 08:00–18:00 Europe/Berlin',
    );
    expect(describeSubject(entry('SETTINGS', 'hours cleared'), i18n.t)).toBe('geändert: Zeiten aufgehoben');
    expect(describeSubject(entry('SHARE', 'dave@example.com (ADMIN)'), i18n.t)).toBe('für dave@example.com (Admin)');
    expect(describeSubject(entry('SHARE', 'dave@example.com (USER)'), i18n.t)).toBe('für dave@example.com (Nutzer)');
    expect(describeSubject(entry('REVOKE', 'guest@example.com'), i18n.t)).toBe('für guest@example.com');
    expect(describeSubject(entry('UNLOCK', null), i18n.t)).toBeNull();
  });
});
