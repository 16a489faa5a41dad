import * as crypto from 'node:crypto';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { checkOfflineAccessCode, hashAccessCode, Keypad, keypadRefusals, offlineAccessCode } from './access-codes.js';

vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof crypto>();
  return { ...actual, createHmac: vi.fn(actual.createHmac) };
});

const SECRET = Buffer.alloc(32, 7).toString('base64url');
const LOCK = '0b6f4d1e-6f63-4c1b-9d7e-1f0a3c2b5e44';
const H = 3600;
// 2026-11-28T10:00:00Z, an hour boundary.
const START = 1_795_860_000;

describe('hashAccessCode', () => {
  it('is base64url(SHA-256(salt + ":" + code))', () => {
    expect(hashAccessCode('c2FsdA', '123456')).toBe(createHash('sha256').update('c2FsdA:123456').digest('base64url'));
    expect(hashAccessCode('salt-a', '123456')).not.toBe(hashAccessCode('salt-b', '123456'));
  });
});

describe('offlineAccessCode', () => {
  it('follows the algorithm: the window in the low part, the HMAC in the high part, 10 digits', () => {
    expect(START % H).toBe(0);
    const code = offlineAccessCode(SECRET, LOCK, START, START + 3 * H);
    const startHour = START / H;
    const t = createHmac('sha256', Buffer.from(SECRET, 'base64url')).update(`latchkey-offline-code/v1:${LOCK}:${startHour}:3`).digest();
    const m = Number(t.readBigUInt64BE(0) % 19_290n);
    const w = (startHour % 720) * 720 + 2;
    expect(code).toBe(String(m * 518_400 + w).padStart(10, '0'));
    expect(code).toMatch(/^\d{10}$/);
  });

  it('differs per lock, per secret and per window', () => {
    const code = offlineAccessCode(SECRET, LOCK, START, START + H);
    expect(offlineAccessCode(SECRET, 'another-lock', START, START + H)).not.toBe(code);
    expect(offlineAccessCode(randomBytes(32).toString('base64url'), LOCK, START, START + H)).not.toBe(code);
    expect(offlineAccessCode(SECRET, LOCK, START, START + 2 * H)).not.toBe(code);
    expect(offlineAccessCode(SECRET, LOCK, START + H, START + 2 * H)).not.toBe(code);
  });

  it('throws on a window off the hour, shorter than 1 hour or longer than 720 hours', () => {
    expect(() => offlineAccessCode(SECRET, LOCK, START + 60, START + H)).toThrow(/whole hours/);
    expect(() => offlineAccessCode(SECRET, LOCK, START, START + H + 1)).toThrow(/whole hours/);
    expect(() => offlineAccessCode(SECRET, LOCK, START, START)).toThrow(/at least 1 hour/);
    expect(() => offlineAccessCode(SECRET, LOCK, START, START - H)).toThrow(/at least 1 hour/);
    expect(() => offlineAccessCode(SECRET, LOCK, START, START + 721 * H)).toThrow(/at most 30 days/);
    expect(() => offlineAccessCode(SECRET, LOCK, START, START + 720 * H)).not.toThrow();
  });
});

describe('checkOfflineAccessCode', () => {
  const code = offlineAccessCode(SECRET, LOCK, START, START + 3 * H);

  it('accepts from the first second of the window to the last, and answers the window', () => {
    for (const now of [START, START + 1, START + H + 17, START + 3 * H - 1]) expect(checkOfflineAccessCode(SECRET, LOCK, code, now)).toEqual({ ok: true, start: START, end: START + 3 * H });
  });

  it('refuses before the window and from its end on', () => {
    expect(checkOfflineAccessCode(SECRET, LOCK, code, START - 1)).toEqual({ ok: false, reason: keypadRefusals.unknown });
    expect(checkOfflineAccessCode(SECRET, LOCK, code, START - 719 * H)).toMatchObject({ ok: false });
    expect(checkOfflineAccessCode(SECRET, LOCK, code, START + 3 * H)).toEqual({ ok: false, reason: keypadRefusals.expired });
    expect(checkOfflineAccessCode(SECRET, LOCK, code, START + 719 * H)).toMatchObject({ ok: false });
    // 720 hours later the start hour repeats modulo 720: the HMAC names the real start hour, so it does not match.
    expect(checkOfflineAccessCode(SECRET, LOCK, code, START + 720 * H + 1)).toEqual({ ok: false, reason: keypadRefusals.unknown });
  });

  it('holds across a 30-day window to its last second', () => {
    const long = offlineAccessCode(SECRET, LOCK, START, START + 720 * H);
    expect(checkOfflineAccessCode(SECRET, LOCK, long, START + 720 * H - 1)).toEqual({ ok: true, start: START, end: START + 720 * H });
    expect(checkOfflineAccessCode(SECRET, LOCK, long, START + 720 * H)).toMatchObject({ ok: false });
  });

  it('refuses a code with any one digit changed, another lock’s code, and what is not 10 digits', () => {
    const now = START + 10;
    for (let i = 0; i < code.length; i++) {
      const digit = (Number(code[i]) + 1) % 10;
      const changed = `${code.slice(0, i)}${digit}${code.slice(i + 1)}`;
      expect(checkOfflineAccessCode(SECRET, LOCK, changed, now).ok, `digit ${i}`).toBe(false);
    }
    expect(checkOfflineAccessCode(SECRET, 'another-lock', code, now).ok).toBe(false);
    expect(checkOfflineAccessCode(randomBytes(32).toString('base64url'), LOCK, code, now).ok).toBe(false);
    expect(checkOfflineAccessCode(SECRET, LOCK, code.slice(1), now).ok).toBe(false);
    expect(checkOfflineAccessCode(SECRET, LOCK, '9999999999', now).ok).toBe(false);
    expect(checkOfflineAccessCode(SECRET, LOCK, `${code.slice(0, 9)}x`, now).ok).toBe(false);
  });

  it('costs one HMAC per check, right code or wrong', () => {
    const hmac = vi.mocked(crypto.createHmac);
    for (const typed of [code, `${code.slice(0, 9)}${(Number(code[9]) + 1) % 10}`]) {
      hmac.mockClear();
      checkOfflineAccessCode(SECRET, LOCK, typed, START + 60);
      expect(hmac).toHaveBeenCalledTimes(1);
    }
  });

  it('accepts every code of windows holding now, of any length and start', () => {
    const now = START + 5 * H + 30;
    for (const [from, hours] of [
      [START + 5 * H, 1],
      [START - 100 * H, 106],
      [START - 714 * H, 720],
      [START, 6],
    ] as const)
      expect(checkOfflineAccessCode(SECRET, LOCK, offlineAccessCode(SECRET, LOCK, from, from + hours * H), now)).toEqual({ ok: true, start: from, end: from + hours * H });
  });
});

describe('Keypad', () => {
  const MIN = 60_000;

  it('locks out on the 5th wrong code within 5 minutes, for 5 minutes', () => {
    let now = 1_000_000;
    const keypad = new Keypad({ clock: () => now });
    for (let i = 0; i < 4; i++) {
      expect(keypad.wrongCode()).toBeNull();
      now += MIN;
    }
    expect(keypad.lockedOutUntil()).toBeNull();
    expect(keypad.wrongCode()).toBe(now + 5 * MIN);
    const until = now + 5 * MIN;
    expect(keypad.lockedOutUntil()).toBe(until);
    now = until - 1;
    expect(keypad.lockedOutUntil()).toBe(until);
    // What is typed during the lockout neither extends it nor counts toward the next one.
    expect(keypad.wrongCode()).toBeNull();
    now = until;
    expect(keypad.lockedOutUntil()).toBeNull();
    for (let i = 0; i < 4; i++) expect(keypad.wrongCode()).toBeNull();
    // The next lockout lasts twice as long.
    expect(keypad.wrongCode()).toBe(until + 10 * MIN);
  });

  it('does not lock out when 19 wrong codes are spread over more than 5 minutes each five', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    for (let i = 0; i < 19; i++) {
      expect(keypad.wrongCode()).toBeNull();
      now += 75_001;
    }
    expect(keypad.lockedOutUntil()).toBeNull();
  });

  it('locks out on the 20th wrong code within 24 hours however slowly they come', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    for (let i = 0; i < 19; i++) {
      expect(keypad.wrongCode()).toBeNull();
      now += 70 * MIN;
    }
    // 19 codes over 22 hours: the 20th within 24 hours of the first.
    expect(keypad.wrongCode()).toBe(now + 5 * MIN);
    // Codes older than 24 hours no longer count: after 24 quiet hours, 19 more spaced 80 minutes stay free.
    now += 5 * MIN + 24 * 60 * MIN;
    for (let i = 0; i < 19; i++) {
      expect(keypad.wrongCode()).toBeNull();
      now += 80 * MIN;
    }
    expect(keypad.escalation()).toBe(0);
  });

  it('doubles each further lockout (10, 20, 40 minutes …), and after a lockout 5 wrong codes at any pace start the next', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    const lockouts: number[] = [];
    for (let round = 0; round < 5; round++) {
      let until: number | null = null;
      // After the first lockout the next 5 wrong codes lock out even an hour apart.
      for (let i = 0; i < 5; i++) {
        until = keypad.wrongCode();
        if (until === null) now += round === 0 ? 30_000 : 60 * MIN;
      }
      expect(until).not.toBeNull();
      lockouts.push((until! - now) / MIN);
      now = until!;
    }
    expect(lockouts).toEqual([5, 10, 20, 40, 80]);
    expect(keypad.escalation()).toBe(5);
  });

  it('caps a lockout at 24 hours', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    const lockouts: number[] = [];
    for (let round = 0; round < 12; round++) {
      let until: number | null = null;
      for (let i = 0; i < 5 && until === null; i++) until = keypad.wrongCode();
      lockouts.push((until! - now) / MIN);
      now = until!;
    }
    expect(lockouts).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440, 1440]);
  });

  it('resets the escalation after 24 hours without a wrong code, counted from the end of the last lockout', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    const lockOut = () => {
      let until: number | null = null;
      for (let i = 0; i < 5 && until === null; i++) until = keypad.wrongCode();
      return until!;
    };
    now = lockOut();
    now = lockOut();
    expect(keypad.escalation()).toBe(2);
    // 24 hours after the lockout ended, less a moment: the next lockout still lasts 20 minutes.
    now += 24 * 60 * MIN - 1;
    expect(keypad.escalation()).toBe(2);
    let start = now;
    expect(lockOut() - start).toBe(20 * MIN);
    now = start + 20 * MIN + 24 * 60 * MIN;
    expect(keypad.escalation()).toBe(0);
    start = now;
    expect(lockOut() - start).toBe(5 * MIN);
  });

  it('takes back its wrong codes and lockout from a snapshot, and ignores a malformed one', () => {
    const now = 0;
    const keypad = new Keypad({ clock: () => now });
    for (let i = 0; i < 4; i++) keypad.wrongCode();
    const restored = new Keypad({ clock: () => now });
    restored.restore(JSON.parse(JSON.stringify(keypad.snapshot())));
    expect(restored.wrongCode()).toBe(5 * MIN);
    const locked = new Keypad({ clock: () => now });
    locked.restore(restored.snapshot());
    expect(locked.lockedOutUntil()).toBe(5 * MIN);
    const fresh = new Keypad({ clock: () => now });
    fresh.restore({ wrong: 'x', until: 'soon', level: -1 });
    fresh.restore({ level: 1.5 });
    fresh.restore(null);
    expect(fresh.snapshot()).toEqual({ wrong: [], until: 0, level: 0 });
  });

  it('keeps its escalation in a snapshot: a restored keypad doubles the next lockout', () => {
    let now = 0;
    const keypad = new Keypad({ clock: () => now });
    for (let round = 0; round < 3; round++) {
      let until: number | null = null;
      for (let i = 0; i < 5 && until === null; i++) until = keypad.wrongCode();
      now = until!;
    }
    const restored = new Keypad({ clock: () => now });
    restored.restore(JSON.parse(JSON.stringify(keypad.snapshot())));
    expect(restored.escalation()).toBe(3);
    let until: number | null = null;
    for (let i = 0; i < 5 && until === null; i++) until = restored.wrongCode();
    expect(until! - now).toBe(40 * MIN);
  });
});
