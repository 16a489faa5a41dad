import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Access codes typed at a lock's keypad.
 *
 * Online codes travel in the lock's config as salted hashes: hash = base64url(SHA-256(utf8(salt + ":" +
 * code))), with one fresh salt per config. The lock hashes a typed code once and looks it up.
 *
 * Offline codes are computed by the platform from a secret the device received at provisioning, for a
 * window of whole hours (1 h to 720 h), and checked by the lock without any network:
 *   startHour = start / 3600, d = (end - start) / 3600
 *   w = (startHour mod 720) * 720 + (d - 1)                         0 <= w < 518,400
 *   t = HMAC-SHA256(secret, utf8("latchkey-offline-code/v1:" + lockId + ":" + startHour + ":" + d))
 *   m = (first 8 bytes of t, unsigned big-endian) mod 19,290
 *   code = String(m * 518,400 + w).padStart(10, "0")
 * The lock reads w back from the code, finds the one start hour in the last 720 hours that matches it,
 * and accepts when now is inside the window and one HMAC matches.
 */

/** An offline code's window starts on one of this many hours (30 days) before now, and lasts 1 to this many hours. */
export const OFFLINE_CODE_MAX_HOURS = 720;
/** How many (start hour mod 720, duration) pairs a code can name: 720 × 720. */
export const OFFLINE_CODE_WINDOWS = OFFLINE_CODE_MAX_HOURS * OFFLINE_CODE_MAX_HOURS;
/** The HMAC part of a code takes values 0 ≤ m < this, so the whole code stays under 10^10 (10 digits). */
export const OFFLINE_CODE_MACS = 19_290;
/** Every offline code has exactly this many digits; an online code has 4 to 8, so the two never collide. */
export const OFFLINE_CODE_DIGITS = 10;
const HOUR_S = 3600;
const OFFLINE_CODE_LABEL = 'latchkey-offline-code/v1';

/** What a keypad answers when it refuses a code. */
export const keypadRefusals = {
  unknown: 'This code does not open this lock',
  malformed: 'A code is 4 to 10 digits',
  notYet: 'This code is not valid yet',
  expired: 'This code has expired',
  withdrawn: 'This code was withdrawn',
  lockedOut: (untilMs: number) => `Too many wrong codes: the keypad refuses every code until ${new Date(untilMs).toISOString()}`,
  noSecret: 'This lock has no offline-code secret',
} as const;

/** The salted hash of an online code as a config carries it: base64url(SHA-256(utf8(salt + ":" + code))). */
export function hashAccessCode(salt: string, code: string): string {
  return createHash('sha256').update(`${salt}:${code}`, 'utf8').digest('base64url');
}

function secretBytes(secret: string): Buffer {
  const bytes = Buffer.from(secret, 'base64url');
  if (bytes.length < 16) throw new Error('The offline-code secret must be base64url of at least 16 bytes (32 random bytes are issued)');
  return bytes;
}

function offlineMac(key: Buffer, lockId: string, startHour: number, hours: number): number {
  const t = createHmac('sha256', key).update(`${OFFLINE_CODE_LABEL}:${lockId}:${startHour}:${hours}`, 'utf8').digest();
  return Number(t.readBigUInt64BE(0) % BigInt(OFFLINE_CODE_MACS));
}

const formatCode = (mac: number, w: number) => String(mac * OFFLINE_CODE_WINDOWS + w).padStart(OFFLINE_CODE_DIGITS, '0');

/**
 * The offline code of a lock for the window [start, end) (epoch seconds on whole hours, 1 to 720 hours
 * apart). Throws an Error saying what is wrong with any other window.
 */
export function offlineAccessCode(secret: string, lockId: string, start: number, end: number): string {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0) throw new Error('An offline code’s start and end must be whole epoch seconds');
  if (start % HOUR_S !== 0 || end % HOUR_S !== 0) throw new Error('An offline code’s start and end must be on whole hours');
  const hours = (end - start) / HOUR_S;
  if (hours < 1) throw new Error('An offline code’s end must be at least 1 hour after its start');
  if (hours > OFFLINE_CODE_MAX_HOURS) throw new Error('An offline code’s end must be at most 30 days (720 hours) after its start');
  const startHour = start / HOUR_S;
  const w = (startHour % OFFLINE_CODE_MAX_HOURS) * OFFLINE_CODE_MAX_HOURS + (hours - 1);
  return formatCode(offlineMac(secretBytes(secret), lockId, startHour, hours), w);
}

export type OfflineCodeCheck = { ok: true; start: number; end: number } | { ok: false; reason: string };

/**
 * Whether `code` is an offline code of this lock whose window holds `nowSeconds` (start <= now < end).
 * One HMAC, compared in constant time. Whether the code was withdrawn is the caller's (its salted hash
 * against the config's withdrawn list).
 */
export function checkOfflineAccessCode(secret: string, lockId: string, code: string, nowSeconds: number): OfflineCodeCheck {
  if (!/^\d{10}$/.test(code)) return { ok: false, reason: keypadRefusals.unknown };
  const n = Number(code);
  const mac = Math.floor(n / OFFLINE_CODE_WINDOWS);
  if (mac >= OFFLINE_CODE_MACS) return { ok: false, reason: keypadRefusals.unknown };
  const w = n % OFFLINE_CODE_WINDOWS;
  const startMod = Math.floor(w / OFFLINE_CODE_MAX_HOURS);
  const hours = (w % OFFLINE_CODE_MAX_HOURS) + 1;
  const nowHour = Math.floor(nowSeconds / HOUR_S);
  // The one start hour in (nowHour − 720, nowHour] the code names.
  const startHour = nowHour - ((((nowHour - startMod) % OFFLINE_CODE_MAX_HOURS) + OFFLINE_CODE_MAX_HOURS) % OFFLINE_CODE_MAX_HOURS);
  if (startHour < 0) return { ok: false, reason: keypadRefusals.unknown };
  const start = startHour * HOUR_S;
  const end = (startHour + hours) * HOUR_S;
  const expected = formatCode(offlineMac(secretBytes(secret), lockId, startHour, hours), w);
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(code))) return { ok: false, reason: keypadRefusals.unknown };
  // start <= now holds by construction; a window that ended names a start in the past that matched.
  if (nowSeconds >= end) return { ok: false, reason: keypadRefusals.expired };
  return { ok: true, start, end };
}

export interface KeypadSnapshot {
  /** The wrong codes of the last 24 hours since the last lockout (epoch ms). */
  wrong: number[];
  /** When the last lockout ends (epoch ms), 0 when there was none. */
  until: number;
  /** Lockouts since the escalation last reset: the next one lasts lockoutMs · 2^level, at most maxLockoutMs. */
  level: number;
}

export interface KeypadOptions {
  /** Epoch ms; the tests move it. */
  clock?: () => number;
  /** Wrong codes within `windowMs` that lock the keypad out (5); after a lockout, this many at any pace. */
  maxWrong?: number;
  /** 5 minutes. */
  windowMs?: number;
  /** Wrong codes within `quietMs` that lock the keypad out however slowly they are typed (20). */
  maxWrongPerQuiet?: number;
  /** How long the first lockout lasts: 5 minutes. Each further one before the escalation resets lasts twice as long. */
  lockoutMs?: number;
  /** The longest lockout: 24 hours. */
  maxLockoutMs?: number;
  /** The escalation resets after this long without a wrong code, counted from the last lockout's end: 24 hours. */
  quietMs?: number;
}

/**
 * A keypad's guard against guessing. 5 wrong codes within 5 minutes, or 20 within 24 hours, lock it
 * out: it refuses every code (right ones too) for 5 minutes. After a lockout, the next 5 wrong codes
 * lock it out again however slowly they come, for twice as long as the last (10, 20, 40 minutes … at
 * most 24 hours). The escalation resets only after 24 hours without a wrong code, counted from the end
 * of the last lockout; a right code does not reset it (anyone holding a code could otherwise restart a
 * guesser's budget). What is typed during a lockout is refused unchecked and counts toward nothing.
 */
export class Keypad {
  private readonly clock: () => number;
  private readonly maxWrong: number;
  private readonly windowMs: number;
  private readonly maxWrongPerQuiet: number;
  private readonly lockoutMs: number;
  private readonly maxLockoutMs: number;
  private readonly quietMs: number;
  private wrong: number[] = [];
  private until = 0;
  private level = 0;

  constructor(options: KeypadOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.maxWrong = options.maxWrong ?? 5;
    this.windowMs = options.windowMs ?? 5 * 60_000;
    this.maxWrongPerQuiet = options.maxWrongPerQuiet ?? 20;
    this.lockoutMs = options.lockoutMs ?? 5 * 60_000;
    this.maxLockoutMs = options.maxLockoutMs ?? 24 * 3_600_000;
    this.quietMs = options.quietMs ?? 24 * 3_600_000;
  }

  /** While locked out: when the lockout ends (epoch ms); otherwise null. */
  lockedOutUntil(now = this.clock()): number | null {
    return now < this.until ? this.until : null;
  }

  /** Lockouts since the escalation last reset (0: the next lockout is the first, 5 minutes). */
  escalation(now = this.clock()): number {
    return this.quietSince() + this.quietMs <= now ? 0 : this.level;
  }

  /** What it remembers (the recent wrong codes, the lockout's end, the escalation), for a device to keep across a restart. */
  snapshot(): KeypadSnapshot {
    return { wrong: [...this.wrong], until: this.until, level: this.level };
  }

  /** Takes back what `snapshot` gave (read from disk); anything malformed is ignored. */
  restore(snapshot: unknown): void {
    const { wrong, until, level } = (snapshot ?? {}) as Partial<KeypadSnapshot>;
    if (Array.isArray(wrong) && wrong.every((at) => Number.isFinite(at))) this.wrong = wrong.slice(-this.maxWrongPerQuiet);
    if (typeof until === 'number' && Number.isFinite(until)) this.until = until;
    if (typeof level === 'number' && Number.isSafeInteger(level) && level >= 0) this.level = level;
  }

  /** Counts a wrong code; answers the lockout's end when this one started a lockout, else null. */
  wrongCode(now = this.clock()): number | null {
    if (this.lockedOutUntil(now) !== null) return null;
    this.level = this.escalation(now);
    this.wrong = this.wrong.filter((at) => at > now - this.quietMs);
    this.wrong.push(now);
    const recent = this.wrong.filter((at) => at > now - this.windowMs).length;
    const allowed = this.level > 0 ? this.maxWrong : this.maxWrongPerQuiet;
    if (recent < this.maxWrong && this.wrong.length < allowed) return null;
    this.wrong = [];
    this.until = now + Math.min(this.lockoutMs * 2 ** this.level, this.maxLockoutMs);
    this.level += 1;
    return this.until;
  }

  /** The last wrong code or the end of the last lockout, whichever is later (epoch ms). */
  private quietSince(): number {
    return Math.max(this.until, this.wrong.at(-1) ?? 0);
  }
}
