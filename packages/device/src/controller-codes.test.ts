import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeviceConfig } from '@latchkey/contract';
import * as accessCodes from './access-codes.js';
import { hashAccessCode, keypadRefusals, offlineAccessCode } from './access-codes.js';
import { CommandActuator, VirtualActuator } from './actuators.js';
import { LockController, type LockEvent } from './controller.js';
import { deviceRefusals, lockRefusals } from './refusals.js';
import { configUser, createTestCa, issueLeaf, signOperation, testConfig, unlockClaims, type TestCa, type TestUser } from './test-fixture.js';

vi.mock('./access-codes.js', async (original) => {
  const actual = await original<typeof accessCodes>();
  return { ...actual, hashAccessCode: vi.fn(actual.hashAccessCode) };
});

const LOCK = randomUUID();
const SALT = randomBytes(16).toString('base64url');
const SECRET = randomBytes(32).toString('base64url');
const H = 3600;
const MIN = 60_000;
let ca: TestCa;
let alice: TestUser;

beforeAll(async () => {
  ca = await createTestCa();
  alice = await issueLeaf(ca);
});

const nowS = () => Math.floor(Date.now() / 1000);
const code = (accessCodeId: string, value: string, start: number | null = null, end: number | null = null) => ({ accessCodeId, hash: hashAccessCode(SALT, value), start, end });

function lockWith(extra: Partial<DeviceConfig> = {}, options: { secret?: string | null; clock?: () => number; actuator?: CommandActuator } = {}) {
  const virtual = new VirtualActuator();
  const actuator = options.actuator ?? virtual;
  const lock = new LockController({
    lockId: LOCK,
    platformCa: ca.pem,
    actuator,
    config: testConfig(LOCK, [configUser(alice)], { unlockTime: 7, accessCodeSalt: SALT, ...extra }),
    offlineCodeSecret: options.secret === undefined ? SECRET : options.secret,
    clock: options.clock,
  });
  const events: LockEvent[] = [];
  lock.on('event', (event) => events.push(event));
  return { lock, actuator: virtual, events };
}

describe('LockController at the keypad: online codes', () => {
  it('opens for the config’s unlock time on a code of the config, and says so in an event', async () => {
    const { lock, actuator, events } = lockWith({ accessCodes: [code('c1', '123456'), code('c2', '4321')] });
    const at = Date.now();
    expect(await lock.enterCode('4321', at)).toEqual({ outcome: 'DONE', accessCodeId: 'c2' });
    expect(actuator.locked).toBe(false);
    expect(lock.state.unlockedUntil! - at).toBeGreaterThanOrEqual(7000);
    expect(lock.state.unlockedUntil! - at).toBeLessThan(8000);
    expect(events).toEqual([{ at, type: 'unlocked', method: 'access_code', accessCodeId: 'c2' }]);
    await lock.close({ lock: true });
  });

  it('refuses a code outside its window (naming it) and a code the config does not hold', async () => {
    const now = nowS();
    const { lock, actuator, events } = lockWith({ accessCodes: [code('early', '111111', now + 60, null), code('late', '222222', null, now), code('now', '333333', now - 1, now + 60)] });
    expect(await lock.enterCode('111111')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.notYet, accessCodeId: 'early' });
    expect(await lock.enterCode('222222')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.expired, accessCodeId: 'late' });
    expect(await lock.enterCode('999999')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
    expect(await lock.enterCode('12ab')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.malformed });
    expect(actuator.locked).toBe(true);
    expect(events.map((e) => [e.type, e.accessCodeId, e.reason])).toEqual([
      ['access_denied', 'early', keypadRefusals.notYet],
      ['access_denied', 'late', keypadRefusals.expired],
      ['access_denied', undefined, keypadRefusals.unknown],
      ['access_denied', undefined, keypadRefusals.malformed],
    ]);
    expect(await lock.enterCode('333333')).toMatchObject({ outcome: 'DONE', accessCodeId: 'now' });
    await lock.close({ lock: true });
  });

  it('stops taking a code the moment a config without it arrives', async () => {
    const { lock } = lockWith({ accessCodes: [code('c1', '123456')] });
    lock.setConfig(testConfig(LOCK, [], { version: 2, accessCodeSalt: randomBytes(16).toString('base64url'), accessCodes: [] }));
    expect(await lock.enterCode('123456')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
  });

  it('looks a code up among 1,000 with one hash', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => code(`c${i}`, String(100000 + i)));
    const { lock } = lockWith({ accessCodes: many });
    const hash = vi.mocked(accessCodes.hashAccessCode);
    hash.mockClear();
    expect(await lock.enterCode('100999')).toEqual({ outcome: 'DONE', accessCodeId: 'c999' });
    expect(hash).toHaveBeenCalledTimes(1);
    await lock.close({ lock: true });
  });

  it('answers REFUSED without a lockout count when the code holds but the actuator fails', async () => {
    const { lock, events } = lockWith({ accessCodes: [code('c1', '123456')] }, { actuator: new CommandActuator({ unlockCommand: '/bin/sh -c "exit 1"', lockCommand: 'true' }) });
    for (let i = 0; i < 6; i++) expect(await lock.enterCode('123456')).toEqual({ outcome: 'REFUSED', reason: deviceRefusals.actuatorFailed, accessCodeId: 'c1' });
    expect(events.every((e) => e.type === 'access_denied')).toBe(true);
    expect(lock.keypad.lockedOutUntil()).toBeNull();
  });
});

describe('LockController at the keypad: offline codes', () => {
  const hourStart = () => Math.floor(nowS() / H) * H;

  it('opens on an offline code within its window, with no config codes at all, and names the window', async () => {
    const start = hourStart() - 2 * H;
    const offline = offlineAccessCode(SECRET, LOCK, start, start + 5 * H);
    const { lock, events } = lockWith();
    expect(await lock.enterCode(offline)).toEqual({ outcome: 'DONE', codeWindow: { start, end: start + 5 * H } });
    expect(events).toEqual([expect.objectContaining({ type: 'unlocked', method: 'access_code', codeWindow: { start, end: start + 5 * H } })]);
    await lock.close({ lock: true });
  });

  it('works on a lock that has no config yet', async () => {
    const start = hourStart();
    const lock = new LockController({ lockId: LOCK, platformCa: ca.pem, offlineCodeSecret: SECRET });
    expect(await lock.enterCode(offlineAccessCode(SECRET, LOCK, start, start + H))).toMatchObject({ outcome: 'DONE' });
    await lock.close({ lock: true });
  });

  it('refuses an offline code outside its window, of another lock, or without a secret', async () => {
    const start = hourStart();
    const { lock } = lockWith();
    expect(await lock.enterCode(offlineAccessCode(SECRET, LOCK, start + H, start + 2 * H))).toMatchObject({ outcome: 'REFUSED' });
    expect(await lock.enterCode(offlineAccessCode(SECRET, LOCK, start - 3 * H, start))).toMatchObject({ outcome: 'REFUSED', reason: keypadRefusals.expired });
    expect(await lock.enterCode(offlineAccessCode(SECRET, randomUUID(), start, start + H))).toMatchObject({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
    const { lock: noSecret } = lockWith({}, { secret: null });
    expect(await noSecret.enterCode(offlineAccessCode(SECRET, LOCK, start, start + H))).toMatchObject({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
  });

  it('refuses an offline code on the config’s withdrawn list, naming it', async () => {
    const start = hourStart();
    const withdrawn = offlineAccessCode(SECRET, LOCK, start, start + 2 * H);
    const kept = offlineAccessCode(SECRET, LOCK, start, start + 3 * H);
    const { lock, actuator, events } = lockWith({ withdrawnOfflineCodes: [code('gone', withdrawn, start, start + 2 * H)] });
    expect(await lock.enterCode(withdrawn)).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.withdrawn, accessCodeId: 'gone', codeWindow: { start, end: start + 2 * H } });
    expect(actuator.locked).toBe(true);
    expect(events[0]).toMatchObject({ type: 'access_denied', accessCodeId: 'gone', reason: keypadRefusals.withdrawn });
    expect(await lock.enterCode(kept)).toMatchObject({ outcome: 'DONE' });
    await lock.close({ lock: true });
  });
});

describe('LockController at the keypad: lockout', () => {
  it('refuses every code, a right one too, for 5 minutes after 5 wrong ones within 5 minutes, with one lockout event', async () => {
    let now = Date.now();
    const { lock, events } = lockWith({ accessCodes: [code('c1', '123456')] }, { clock: () => now });
    for (let i = 0; i < 5; i++) {
      expect(await lock.enterCode('000000', now)).toMatchObject({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
      now += 30_000;
    }
    const until = now - 30_000 + 5 * MIN;
    expect(events.map((e) => e.type)).toEqual(['access_denied', 'access_denied', 'access_denied', 'access_denied', 'access_denied', 'keypad_locked_out']);
    expect(events[5]).toMatchObject({ method: 'access_code', reason: keypadRefusals.lockedOut(until) });
    expect(await lock.enterCode('123456', now)).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.lockedOut(until) });
    expect(await lock.enterCode('123456', until - 1)).toMatchObject({ outcome: 'REFUSED' });
    expect(events).toHaveLength(6);
    now = until;
    expect(await lock.enterCode('123456', until)).toMatchObject({ outcome: 'DONE', accessCodeId: 'c1' });
    await lock.close({ lock: true });
  });

  it('doubles the next lockout even when a right code opened the door in between', async () => {
    let now = Date.now();
    const { lock, events } = lockWith({ accessCodes: [code('c1', '123456')] }, { clock: () => now });
    const lockOut = async () => {
      for (let i = 0; i < 5; i++) await lock.enterCode('000000', now);
      return lock.keypad.lockedOutUntil(now)!;
    };
    const first = await lockOut();
    expect(first - now).toBe(5 * MIN);
    now = first;
    expect(await lock.enterCode('123456', now)).toMatchObject({ outcome: 'DONE' });
    const second = await lockOut();
    expect(second - now).toBe(10 * MIN);
    expect(events.filter((e) => e.type === 'keypad_locked_out').map((e) => e.reason)).toEqual([keypadRefusals.lockedOut(first), keypadRefusals.lockedOut(second)]);
    await lock.close({ lock: true });
  });

  it('counts refused offline codes and codes outside their window toward the lockout', async () => {
    const now = Date.now();
    const start = Math.floor(now / 1000 / H) * H;
    const { lock, events } = lockWith({ accessCodes: [code('late', '222222', null, 1)] });
    for (let i = 0; i < 4; i++) await lock.enterCode('222222', now);
    await lock.enterCode(offlineAccessCode(SECRET, LOCK, start + H, start + 2 * H), now);
    expect(events.at(-1)?.type).toBe('keypad_locked_out');
  });
});

describe('LockController: a lapsed config', () => {
  const unlock = () => signOperation(alice, unlockClaims(alice, LOCK, Date.now(), { operation: { type: 'MUTATE_LOCK', locked: false } }));

  it('refuses every signed operation once issuedAt + offlineGraceSeconds has passed, saying since when, and keeps taking codes', async () => {
    const issuedAt = nowS() - 120;
    const { lock, actuator } = lockWith({ issuedAt, offlineGraceSeconds: 60, accessCodes: [code('c1', '123456')] });
    expect(await lock.handle(unlock())).toMatchObject({ outcome: 'REFUSED', reason: lockRefusals.configLapsed(issuedAt) });
    expect(lockRefusals.configLapsed(issuedAt)).toContain(`since ${new Date(issuedAt * 1000).toISOString()}`);
    expect(actuator.locked).toBe(true);
    expect(await lock.enterCode('123456')).toMatchObject({ outcome: 'DONE' });
    await lock.close({ lock: true });
  });

  it('obeys signed operations within the grace, and again once a fresh config arrives', async () => {
    const { lock } = lockWith({ issuedAt: nowS() - 30, offlineGraceSeconds: 60 });
    expect(await lock.handle(unlock())).toMatchObject({ outcome: 'DONE' });
    lock.setConfig(testConfig(LOCK, [configUser(alice)], { version: 2, issuedAt: nowS() - 120, offlineGraceSeconds: 60 }));
    expect(await lock.handle(unlock())).toMatchObject({ outcome: 'REFUSED' });
    lock.setConfig(testConfig(LOCK, [configUser(alice)], { version: 3, issuedAt: nowS(), offlineGraceSeconds: 60 }));
    expect(lock.configLapsesAt).toBe(nowS() + 60);
    expect(await lock.handle(unlock())).toMatchObject({ outcome: 'DONE' });
    await lock.close({ lock: true });
  });
});

describe('LockController: sensors', () => {
  it('turns door, battery, jammed and tampered reports into events, a repeated door state or level once', () => {
    const { lock, events } = lockWith();
    const at = 1_000;
    expect(lock.report({ type: 'door_opened' }, at)).toBe(true);
    expect(lock.report({ type: 'door_opened' }, at)).toBe(false);
    lock.report({ type: 'door_closed' }, at);
    lock.report({ type: 'battery', value: 80 }, at);
    lock.report({ type: 'battery', value: 80 }, at);
    lock.report({ type: 'battery', value: 15 }, at);
    lock.report({ type: 'jammed' }, at);
    lock.report({ type: 'tampered' }, at);
    lock.report({ type: 'tampered' }, at);
    expect(events).toEqual([
      { at, type: 'door_opened' },
      { at, type: 'door_closed' },
      { at, type: 'battery', value: 80 },
      { at, type: 'battery', value: 15 },
      { at, type: 'jammed' },
      { at, type: 'tampered' },
      { at, type: 'tampered' },
    ]);
    expect(lock.sensors).toEqual({ door: 'closed', battery: 15 });
    expect(() => lock.report({ type: 'battery', value: 101 })).toThrow(RangeError);
    expect(() => lock.report({ type: 'battery', value: 2.5 })).toThrow(RangeError);
  });
});
