import type { Lock } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { unlockCommand, shellWord } from '../guide/unlock-snippet';
import {
  defaultShareValues,
  shareFormSchema,
  shareFormWithoutWindowSchema,
  toCreateShare,
  toEpochSeconds,
} from './share-form';
import {
  graceValues,
  settingsValues,
  settingsWithLocationSchema,
  settingsWithoutLocationSchema,
  toUpdateLock,
} from './settings-form';

const lock = (over: Partial<Lock['settings']> = {}): Lock => ({
  id: 'lock-1',
  applicationId: 'app-1',
  name: 'Front Door',
  colour: null,
  settings: { unlockTime: 5, usageRequirements: {}, ...over },
  state: { locked: true, connected: true, unlockedUntil: null },
  createdAt: 0,
});

const issues = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => (result.success ? [] : (result.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`));

describe('share form', () => {
  const valid = { ...defaultShareValues(), email: 'guest@example.com', timezone: 'Europe/London' };

  it('asks for at least one day, a known zone, 24-hour times, and an end after the start', () => {
    expect(issues(shareFormSchema.safeParse(valid))).toEqual([]);
    expect(issues(shareFormSchema.safeParse({ ...valid, days: [] }))).toEqual(['days: Select minimum 1 day']);
    expect(issues(shareFormSchema.safeParse({ ...valid, timezone: 'Mars/Olympus' }))).toEqual([
      'timezone: Not a known time zone (use an IANA name such as Europe/London)',
    ]);
    expect(issues(shareFormSchema.safeParse({ ...valid, from: '25:00' }))).toEqual([
      'from: Use a 24-hour time such as 08:30',
    ]);
    expect(
      issues(shareFormSchema.safeParse({ ...valid, start: '2030-01-02T10:00', end: '2030-01-01T10:00' })),
    ).toEqual(['end: The end must be after the start']);
  });

  it('does not check a switched-off window’s hidden fields, but still the email and the bounds', () => {
    expect(
      issues(shareFormWithoutWindowSchema.safeParse({ ...valid, days: [], timezone: 'Mars/Olympus' })),
    ).toEqual([]);
    expect(
      issues(
        shareFormWithoutWindowSchema.safeParse({
          ...valid,
          email: 'x',
          start: '2030-01-02T10:00',
          end: '2030-01-01T10:00',
        }),
      ),
    ).toEqual(['email: Invalid email address', 'end: The end must be after the start']);
  });

  it('sends bounds as epoch seconds, and the window only when hours are limited, days in week order', () => {
    expect(toCreateShare({ ...valid, email: ' guest@example.com ' })).toEqual({
      email: 'guest@example.com',
      role: 'USER',
      start: null,
      end: null,
      timeWindow: null,
    });
    const limited = toCreateShare({
      ...valid,
      role: 'ADMIN',
      start: '2030-01-01T10:00',
      limitHours: true,
      days: ['FRIDAY', 'MONDAY'],
      from: '08:00',
      until: '18:30',
    });
    expect(limited).toEqual({
      email: 'guest@example.com',
      role: 'ADMIN',
      start: toEpochSeconds('2030-01-01T10:00'),
      end: null,
      timeWindow: { start: '08:00', end: '18:30', timezone: 'Europe/London', days: ['MONDAY', 'FRIDAY'] },
    });
    expect(limited.start).toBe(Math.floor(new Date(2030, 0, 1, 10).getTime() / 1000));
  });
});

describe('settings form', () => {
  it('checks the location fields with the contract only while the rule is on', () => {
    const off = { ...settingsValues(lock()), latitude: '', longitude: '' };
    expect(issues(settingsWithoutLocationSchema.safeParse(off))).toEqual([]);
    expect(
      issues(
        settingsWithLocationSchema.safeParse({
          ...off,
          locationEnabled: true,
          latitude: '91',
          longitude: '0',
        }),
      ),
    ).toEqual(['latitude: The latitude must be between -90 and 90']);
    expect(issues(settingsWithoutLocationSchema.safeParse({ ...off, unlockTime: '61' }))).toEqual([
      'unlockTime: The unlock time must be between 1 and 60 seconds',
    ]);
    expect(issues(settingsWithoutLocationSchema.safeParse({ ...off, unlockTime: '' }))).toEqual([
      'unlockTime: Required',
    ]);
  });

  it('sends only what changed, keeps the time rules, and keeps a switched-off rule’s place', () => {
    const time = [{ start: '08:00', end: '18:00', timezone: 'UTC', days: ['MONDAY' as const] }];
    const current = lock({ usageRequirements: { time } });
    const values = {
      ...settingsValues(current),
      unlockTime: '9',
      locationEnabled: true,
      latitude: '51.5',
      longitude: '-0.12',
      radius: '30',
      accuracy: 'FINE' as const,
    };
    expect(toUpdateLock(values, { unlockTime: true }, current)).toEqual({ settings: { unlockTime: 9 } });
    expect(toUpdateLock(values, { latitude: true }, current)).toEqual({
      settings: {
        usageRequirements: {
          time,
          location: { latitude: 51.5, longitude: -0.12, radius: 30, accuracy: 'FINE', enabled: true },
        },
      },
    });
    const located = lock({
      usageRequirements: {
        location: { latitude: 1, longitude: 2, radius: 3, accuracy: 'LOW', enabled: true },
      },
    });
    expect(
      toUpdateLock(
        { ...settingsValues(located), locationEnabled: false },
        { locationEnabled: true },
        located,
      ),
    ).toEqual({
      settings: {
        usageRequirements: {
          location: { latitude: 1, longitude: 2, radius: 3, accuracy: 'LOW', enabled: false },
        },
      },
    });
  });
});

describe('offline grace in the settings form', () => {
  const off = { ...settingsValues(lock()), latitude: '', longitude: '' };

  it('shows a named grace by name, and any other as a number in the largest unit that divides it', () => {
    expect(settingsValues(lock()).offlineGrace).toBe('604800');
    expect(graceValues(86_400).offlineGrace).toBe('86400');
    expect(graceValues(2 * 86_400)).toEqual({ offlineGrace: 'custom', graceAmount: '2', graceUnit: 'days' });
    expect(graceValues(90 * 60)).toEqual({ offlineGrace: 'custom', graceAmount: '90', graceUnit: 'minutes' });
    expect(graceValues(61)).toEqual({ offlineGrace: 'custom', graceAmount: '61', graceUnit: 'seconds' });
  });

  it('takes a number with a unit from 1 minute to 30 days, and says so at the number otherwise', () => {
    const custom = (graceAmount: string, graceUnit: 'seconds' | 'minutes' | 'hours' | 'days') => ({
      ...off,
      offlineGrace: 'custom' as const,
      graceAmount,
      graceUnit,
    });
    const range =
      'graceAmount: The offline grace must be a whole number of seconds from 60 (1 minute) to 2592000 (30 days)';
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('12', 'hours')))).toEqual([]);
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('30', 'days')))).toEqual([]);
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('31', 'days')))).toEqual([range]);
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('59', 'seconds')))).toEqual([range]);
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('', 'hours')))).toEqual([range]);
    expect(issues(settingsWithoutLocationSchema.safeParse(custom('1.5', 'seconds')))).toEqual([range]);
    expect(issues(settingsWithLocationSchema.safeParse({ ...custom('0', 'days'), latitude: '1', longitude: '2' }))).toEqual([range]);
  });

  it('sends the grace in seconds only when it changed', () => {
    const current = lock();
    expect(toUpdateLock({ ...off, offlineGrace: '3600' }, { offlineGrace: true }, { ...current, offlineGraceSeconds: 604_800 })).toEqual({
      settings: {},
      offlineGraceSeconds: 3600,
    });
    expect(
      toUpdateLock({ ...off, offlineGrace: 'custom', graceAmount: '2', graceUnit: 'days' }, { graceAmount: true }, current),
    ).toEqual({ settings: {}, offlineGraceSeconds: 172_800 });
    expect(toUpdateLock({ ...off, offlineGrace: '604800' }, { offlineGrace: true }, { ...current, offlineGraceSeconds: 604_800 })).toEqual({
      settings: {},
    });
  });
});

describe('unlock command', () => {
  it('fills in the application’s values, quoting any that the shell would split, in a folder of its own', () => {
    const command = unlockCommand({
      apiBase: 'https://p.example/api',
      scriptUrl: 'https://p.example/assets/unlock-from-backend-abc.mjs',
      keyFile: './my-signing-key.json',
      issuer: 'https://auth.example',
      kid: "my key's",
      audience: 'https://api.latchkey.dev',
      lockId: 'lock-1',
      userEmail: 'a@b.c',
    });
    expect(command.split('\n')).toEqual([
      // Jose goes into a folder of the example's own, never into the reader's project.
      'mkdir -p latchkey-unlock && cd latchkey-unlock &&',
      'npm init -y >/dev/null && npm install jose &&',
      'curl -fsSLo unlock-from-backend.mjs https://p.example/assets/unlock-from-backend-abc.mjs &&',
      'LATCHKEY_API=https://p.example/api \\',
      'KEY_FILE=./my-signing-key.json \\',
      "KEY_ID='my key'\\''s' \\",
      'ISSUER=https://auth.example \\',
      'AUDIENCE=https://api.latchkey.dev \\',
      'LOCK_ID=lock-1 \\',
      'USER_EMAIL=a@b.c \\',
      'node unlock-from-backend.mjs',
    ]);
    expect(shellWord('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });
});
