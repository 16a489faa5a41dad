import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { MqttClient } from 'mqtt';
import {
  MAX_ACCESS_CODES_PER_LOCK,
  accessCodeErrors,
  accessCodeLogReasons,
  accessCodeMessages,
  deviceConfigSchema,
  deviceTopic,
  lockMessages,
  messages,
  type AccessCode,
  type DeviceConfig,
  type KeypadResult,
} from '@latchkey/contract';
import { LockController, hashAccessCode, keypadRefusals, offlineAccessCode } from '@latchkey/device';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../config.js';
import { accessCodes, lockActivity, lockDevices } from '../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../test/fixtures/devices.js';
import { appUserToken, createLock, createSandbox, share, type Sandbox } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/**
 * Access codes end to end on a real database: the owner's and an ADMIN's routes, every refused input,
 * clashes, status from `setting` to `set` as a connected device confirms its config, and codes typed at a
 * virtual lock's keypad (the controller a device runs, lockout included) and at a device's own controller.
 */
const ENCRYPTION_KEY = 'access-codes-test-encryption-key-0123456789';
const HOUR = 3600;
let t: TestApp;
let sandbox: Sandbox;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let strangerApp: string;
let mqttPort: number;

beforeAll(async () => {
  t = await createTestApp({ SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY, MQTT_PORT: '0' });
  mqttPort = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  stranger = await createOwner(t);
  strangerApp = await createApplication(t, stranger.userId);
});
afterAll(() => t?.close());

type Method = 'GET' | 'POST' | 'DELETE';
const codesUrl = (lockId: string, applicationId = sandbox.applicationId) => `/api/platform/application/${applicationId}/lock/${lockId}/access-code`;
const call = (method: Method, url: string, payload?: object, token = sandbox.owner.token) =>
  t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
async function create(lockId: string, body: object, token?: string): Promise<AccessCode> {
  const res = await call('POST', codesUrl(lockId), body, token);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as AccessCode;
}
const list = async (lockId: string) => {
  const res = await call('GET', codesUrl(lockId));
  expect(res.statusCode).toBe(200);
  return res.json() as AccessCode[];
};
const keypad = async (lockId: string, code: string): Promise<KeypadResult> => {
  const res = await call('POST', `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/keypad`, { code });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as KeypadResult;
};
const withdraw = (lockId: string, accessCodeId: string) => call('DELETE', `${codesUrl(lockId)}/${accessCodeId}`);
const newLock = () => createLock(t, sandbox.applicationId);
const nowS = () => Math.floor(Date.now() / 1000);
/** A window of whole hours that holds now: from the start of this hour, two hours long. */
const windowNow = () => {
  const start = Math.floor(nowS() / HOUR) * HOUR;
  return { start, end: start + 2 * HOUR };
};
const rowsOf = async (lockId: string) => t.database.db.select().from(accessCodes).where(eq(accessCodes.lockId, lockId));
const activityOf = async (lockId: string) => t.database.db.select().from(lockActivity).where(eq(lockActivity.lockId, lockId));

/** An application user of the sandbox, by the id the platform gave them. */
async function appUser(sub: string): Promise<{ token: string; id: string }> {
  const token = await appUserToken(sandbox, sub);
  const me = await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) });
  return { token, id: (me.json() as { userId: string }).userId };
}

describe('creating a code', () => {
  it('an online code with its digits: 201, set at once on a virtual lock, listed with its code, logged by name', async () => {
    const lockId = await newLock();
    const end = nowS() + 3 * HOUR;
    const code = await create(lockId, { name: 'Cleaner', code: '482913', end });
    expect(code).toEqual({
      accessCodeId: expect.any(String),
      lockId,
      name: 'Cleaner',
      code: '482913',
      kind: 'online',
      start: null,
      end,
      status: 'set',
      createdAt: expect.any(Number),
    });
    expect(await list(lockId)).toEqual([code]);
    const [entry] = await activityOf(lockId);
    expect(entry).toMatchObject({ type: 'ACCESS_CODE', subject: 'Cleaner', reason: accessCodeLogReasons.createdOnline, actorUserId: sandbox.owner.userId, accessCodeId: code.accessCodeId });
    expect(JSON.stringify(entry)).not.toContain('482913');
  });

  it('makes up 6 digits when no code is given', async () => {
    const code = await create(await newLock(), { name: 'Visitor' });
    expect(code.code).toMatch(/^\d{6}$/);
  });

  it('keeps the code sealed in the database', async () => {
    const lockId = await newLock();
    await create(lockId, { name: 'Sealed', code: '90817263' });
    const [row] = await rowsOf(lockId);
    expect(row!.sealedCode).toMatch(/^enc:v1:/);
    expect(row!.sealedCode).not.toContain('90817263');
  });

  it('an offline code: computed from the virtual lock’s secret for its window, 10 digits, set at once', async () => {
    const lockId = await newLock();
    const { start, end } = windowNow();
    const code = await create(lockId, { name: 'Plumber', kind: 'offline', start, end });
    expect(code).toMatchObject({ kind: 'offline', start, end, status: 'set' });
    expect(code.code).toMatch(/^\d{10}$/);
    // Another lock's code for the same window is another code: the secret and the lock id both go in.
    const other = await create(await newLock(), { name: 'Plumber', kind: 'offline', start, end });
    expect(other.code).not.toBe(code.code);
  });

  const later = nowS() + 10 * HOUR - (nowS() % HOUR);
  it.each<[string, object, string]>([
    ['a code with letters', { name: 'A', code: '12a4' }, accessCodeMessages.codeDigits],
    ['a code of 3 digits', { name: 'A', code: '123' }, accessCodeMessages.codeLength],
    ['a code of 9 digits', { name: 'A', code: '123456789' }, accessCodeMessages.codeLength],
    ['no name', { code: '1234' }, messages.required],
    ['an empty name', { name: '  ', code: '1234' }, messages.required],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, accessCodeMessages.nameTooLong],
    ['an end before the start', { name: 'A', start: later + HOUR, end: later }, lockMessages.endBeforeStart],
    ['an end already passed', { name: 'A', end: nowS() - 60 }, accessCodeMessages.endPassed],
    ['a kind that is none', { name: 'A', kind: 'sometimes' }, accessCodeMessages.kind],
    ['a start that is no number', { name: 'A', start: 'tomorrow' }, accessCodeMessages.timeNumber],
    ['an offline code with digits', { name: 'A', kind: 'offline', code: '1234', start: later, end: later + HOUR }, accessCodeMessages.offlineCodeGiven],
    ['an offline code without bounds', { name: 'A', kind: 'offline' }, accessCodeMessages.offlineWindowRequired],
    ['an offline code without an end', { name: 'A', kind: 'offline', start: later }, accessCodeMessages.offlineWindowRequired],
    ['an offline code off the hour', { name: 'A', kind: 'offline', start: later + 60, end: later + 60 + 2 * HOUR }, accessCodeMessages.offlineWholeHours],
    ['an offline code under an hour', { name: 'A', kind: 'offline', start: later, end: later + 1800 }, accessCodeMessages.offlineWindowLength],
    ['an offline code over 30 days', { name: 'A', kind: 'offline', start: later, end: later + 721 * HOUR }, accessCodeMessages.offlineWindowLength],
  ])('refuses %s: 400 with its message, nothing stored', async (_what, body, message) => {
    const lockId = await newLock();
    const res = await call('POST', codesUrl(lockId), body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message });
    expect(await rowsOf(lockId)).toEqual([]);
    expect(await activityOf(lockId)).toEqual([]);
  });

  it('accepts an offline code of exactly 1 hour and of exactly 30 days', async () => {
    const lockId = await newLock();
    const start = Math.floor(nowS() / HOUR) * HOUR + HOUR;
    await create(lockId, { name: 'Short', kind: 'offline', start, end: start + HOUR });
    await create(lockId, { name: 'Long', kind: 'offline', start, end: start + 720 * HOUR });
  });
});

describe('clashes', () => {
  it('the digits of a current online code → 409, nothing stored; free again once it is withdrawn', async () => {
    const lockId = await newLock();
    const first = await create(lockId, { name: 'First', code: '5555' });
    const res = await call('POST', codesUrl(lockId), { name: 'Second', code: '5555' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ code: 409, message: accessCodeErrors.clash });
    expect(await rowsOf(lockId)).toHaveLength(1);
    // Another lock may have the same digits.
    await create(await newLock(), { name: 'Elsewhere', code: '5555' });
    expect((await withdraw(lockId, first.accessCodeId)).statusCode).toBe(204);
    await create(lockId, { name: 'Second', code: '5555' });
  });

  it('an offline code for the window of a current one → 409; of a withdrawn one → 409 saying it was withdrawn', async () => {
    const lockId = await newLock();
    const { start, end } = windowNow();
    const first = await create(lockId, { name: 'First', kind: 'offline', start, end });
    const again = await call('POST', codesUrl(lockId), { name: 'Again', kind: 'offline', start, end });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(accessCodeErrors.clash);
    expect((await withdraw(lockId, first.accessCodeId)).statusCode).toBe(204);
    const afterWithdrawal = await call('POST', codesUrl(lockId), { name: 'Again', kind: 'offline', start, end });
    expect(afterWithdrawal.statusCode).toBe(409);
    expect(afterWithdrawal.json().message).toBe(accessCodeErrors.offlineWindowWithdrawn);
    expect(await rowsOf(lockId)).toHaveLength(1);
  });
});

describe('how many', () => {
  it(`a lock lists at most ${MAX_ACCESS_CODES_PER_LOCK} codes: one more → 409, nothing stored`, async () => {
    const lockId = await newLock();
    await t.database.db.insert(accessCodes).values(
      Array.from({ length: MAX_ACCESS_CODES_PER_LOCK }, (_, i) => ({ lockId, applicationId: sandbox.applicationId, name: `Code ${i}`, kind: 'online' as const, sealedCode: String(10_000 + i) })),
    );
    const res = await call('POST', codesUrl(lockId), { name: 'One too many' });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toBe(accessCodeErrors.tooMany);
    expect(await rowsOf(lockId)).toHaveLength(MAX_ACCESS_CODES_PER_LOCK);
  });
});

describe('withdrawing a code', () => {
  it('an online code leaves the list; an offline one is listed as withdrawn; each logged by name', async () => {
    const lockId = await newLock();
    const online = await create(lockId, { name: 'Nanny', code: '24680' });
    const { start, end } = windowNow();
    const offline = await create(lockId, { name: 'Courier', kind: 'offline', start, end });
    expect((await withdraw(lockId, online.accessCodeId)).statusCode).toBe(204);
    expect((await withdraw(lockId, offline.accessCodeId)).statusCode).toBe(204);
    expect(await list(lockId)).toEqual([{ ...offline, status: 'withdrawn' }]);
    const withdrawals = (await activityOf(lockId)).filter((e) => e.reason === accessCodeLogReasons.withdrawn);
    expect(withdrawals.map((e) => [e.subject, e.accessCodeId, e.actorUserId]).sort()).toEqual(
      [
        ['Courier', offline.accessCodeId, sandbox.owner.userId],
        ['Nanny', online.accessCodeId, sandbox.owner.userId],
      ].sort(),
    );
  });

  it('a code already withdrawn, of another lock, or no code at all → 404', async () => {
    const lockId = await newLock();
    const code = await create(lockId, { name: 'Once', code: '1357' });
    expect((await withdraw(lockId, code.accessCodeId)).statusCode).toBe(204);
    const again = await withdraw(lockId, code.accessCodeId);
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe(accessCodeErrors.notFound);
    const kept = await create(lockId, { name: 'Kept', code: '97531' });
    expect((await withdraw(await newLock(), kept.accessCodeId)).statusCode).toBe(404);
    expect((await withdraw(lockId, 'not-an-id')).statusCode).toBe(404);
    expect(await list(lockId)).toEqual([kept]);
  });
});

describe('who may', () => {
  it('another application’s owner: 404 on every route, nothing read or changed', async () => {
    const lockId = await newLock();
    const code = await create(lockId, { name: 'Private', code: '86420' });
    for (const [method, url, body] of [
      ['GET', codesUrl(lockId), undefined],
      ['POST', codesUrl(lockId), { name: 'Intruder', code: '1111' }],
      ['DELETE', `${codesUrl(lockId)}/${code.accessCodeId}`, undefined],
      ['POST', codesUrl(lockId, strangerApp), { name: 'Intruder', code: '1111' }],
      ['POST', `/api/device/${lockId}/access-code`, { name: 'Intruder', code: '1111' }],
    ] as const) {
      const res = await call(method, url, body, stranger.token);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body).not.toContain('86420');
    }
    expect(await list(lockId)).toEqual([code]);
  });

  it('a lock’s ADMIN creates, lists and withdraws with a user token; a USER gets 403; a user without a share 404', async () => {
    const lockId = await newLock();
    const admin = await appUser('codes-admin');
    const user = await appUser('codes-user');
    const outsider = await appUser('codes-outsider');
    await share(t, lockId, admin.id, { role: 'ADMIN' });
    await share(t, lockId, user.id, { role: 'USER' });
    const url = `/api/device/${lockId}/access-code`;

    const created = await call('POST', url, { name: 'Admin’s code', code: '314159' }, admin.token);
    expect(created.statusCode).toBe(201);
    const code = created.json() as AccessCode;
    expect(code).toMatchObject({ name: 'Admin’s code', code: '314159', status: 'set' });
    expect((await call('GET', url, undefined, admin.token)).json()).toEqual([code]);
    const [entry] = await activityOf(lockId);
    expect(entry).toMatchObject({ type: 'ACCESS_CODE', subject: 'Admin’s code', actorUserId: admin.id });

    for (const [method, path, body] of [
      ['GET', url, undefined],
      ['POST', url, { name: 'User’s code', code: '2718' }],
      ['DELETE', `${url}/${code.accessCodeId}`, undefined],
    ] as const) {
      const asUser = await call(method, path, body, user.token);
      expect(asUser.statusCode, `${method} as a USER`).toBe(403);
      expect(asUser.json().message).toBe(accessCodeErrors.notAdmin);
      expect(asUser.body).not.toContain('314159');
      expect((await call(method, path, body, outsider.token)).statusCode, `${method} without a share`).toBe(404);
    }
    // The owner's portal session is an admin of every lock of the application here too.
    expect((await call('GET', url)).statusCode).toBe(200);

    expect((await call('DELETE', `${url}/${code.accessCodeId}`, undefined, admin.token)).statusCode).toBe(204);
    expect(await list(lockId)).toEqual([]);
  });

  it('an ADMIN whose share has ended is no admin: 403', async () => {
    const lockId = await newLock();
    const former = await appUser('codes-former-admin');
    await share(t, lockId, former.id, { role: 'ADMIN', endsAt: new Date(Date.now() - 60_000) });
    expect((await call('GET', `/api/device/${lockId}/access-code`, undefined, former.token)).statusCode).toBe(403);
  });
});

describe('the keypad of a virtual lock', () => {
  it('an online code opens it; a wrong one, a withdrawn one and one not started yet are refused', async () => {
    const lockId = await newLock();
    const code = await create(lockId, { name: 'Gardener', code: '7391' });
    const later = await create(lockId, { name: 'Tomorrow', code: '8402', start: nowS() + 24 * HOUR });
    expect(await keypad(lockId, '7391')).toEqual({ outcome: 'DONE' });
    expect(t.app.virtualDevices.controllerOf(lockId)!.state.locked).toBe(false);
    // Logged as the door's own report: an unlock with the code, by its name, never its digits.
    const opened = (await activityOf(lockId)).filter((e) => e.type === 'UNLOCK');
    expect(opened).toEqual([expect.objectContaining({ rejected: false, method: 'access_code', accessCodeId: code.accessCodeId, subject: 'Gardener', source: 'device' })]);
    expect(JSON.stringify(await activityOf(lockId))).not.toContain('7391');
    expect(await keypad(lockId, '0000')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
    expect(await keypad(lockId, later.code)).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.notYet });
    expect((await withdraw(lockId, code.accessCodeId)).statusCode).toBe(204);
    expect(await keypad(lockId, '7391')).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.unknown });
  });

  it('5 wrong codes lock the keypad out: then even a right code is refused', async () => {
    const lockId = await newLock();
    await create(lockId, { name: 'Right', code: '1928' });
    for (let i = 0; i < 5; i++) expect((await keypad(lockId, `000${i}`)).outcome).toBe('REFUSED');
    const refused = await keypad(lockId, '1928');
    expect(refused.outcome).toBe('REFUSED');
    expect(refused.reason).toMatch(/^Too many wrong codes/);
    expect((await activityOf(lockId)).filter((e) => e.type === 'KEYPAD_LOCKED_OUT')).toHaveLength(1);
  });

  it('an offline code opens it within its window; outside it, or withdrawn, it is refused', async () => {
    const lockId = await newLock();
    const { start, end } = windowNow();
    const now = await create(lockId, { name: 'Now', kind: 'offline', start, end });
    const future = await create(lockId, { name: 'Future', kind: 'offline', start: end + HOUR, end: end + 2 * HOUR });
    expect(await keypad(lockId, now.code)).toEqual({ outcome: 'DONE' });
    expect((await activityOf(lockId)).filter((e) => e.type === 'UNLOCK')).toEqual([expect.objectContaining({ rejected: false, method: 'access_code', accessCodeId: now.accessCodeId })]);
    expect((await keypad(lockId, future.code)).outcome).toBe('REFUSED');
    expect((await withdraw(lockId, now.accessCodeId)).statusCode).toBe(204);
    expect(await keypad(lockId, now.code)).toEqual({ outcome: 'REFUSED', reason: keypadRefusals.withdrawn });
  });

  it('takes digits only (400), and refuses a lock with a device of its own (409)', async () => {
    const lockId = await newLock();
    const url = `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/keypad`;
    const letters = await call('POST', url, { code: '12ab' });
    expect(letters.statusCode).toBe(400);
    expect(letters.json().message).toBe(accessCodeMessages.keypadDigits);
    expect((await call('POST', url, { code: '12345678901' })).statusCode).toBe(400);
    await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
    const res = await call('POST', url, { code: '1234' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ code: 409, message: accessCodeErrors.keypadNotVirtual });
    expect((await call('POST', url, { code: '1234' }, stranger.token)).statusCode).toBe(404);
  });
});

describe('a lock with a device', () => {
  let device: ProvisionedDevice;
  let client: MqttClient;
  let lockId: string;
  const configs: DeviceConfig[] = [];
  const jwsOf = new Map<number, string>();

  afterEach(async () => {
    client?.end(true);
    await t.app.deviceRuntime.settled();
  });

  /** A device connected over mutual TLS that keeps every config it is sent. */
  async function connect() {
    lockId = await newLock();
    device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
    configs.length = 0;
    client = await connectMqtt(mqttPort, { ...deviceTls(device), clientId: device.deviceId });
    client.on('message', (_topic, payload) => {
      const jws = payload.toString();
      const config = deviceConfigSchema.parse(JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()));
      configs.push(config);
      jwsOf.set(config.version, jws);
    });
    await client.subscribeAsync(deviceTopic(device.deviceId, 'config'), { qos: 1 });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    expect(await eventually(() => configs.length > 0)).toBe(true);
  }
  const latest = () => configs[configs.length - 1]!;
  const configWith = async (check: (config: DeviceConfig) => boolean) => {
    expect(await eventually(() => configs.some(check))).toBe(true);
    return configs.find(check)!;
  };
  const reportState = async (configVersion: number) => {
    await client.publishAsync(deviceTopic(device.deviceId, 'state'), JSON.stringify({ locked: true, firmware: 'test 1', at: new Date().toISOString(), configVersion }), { qos: 1 });
    await t.app.deviceRuntime.settled();
  };

  it('gets an offline-code secret once at provisioning, kept sealed', async () => {
    await connect();
    expect(device.offlineCodeSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row!.offlineCodeSecret).toMatch(/^enc:v1:/);
    expect(row!.offlineCodeSecret).not.toContain(device.offlineCodeSecret!);
  });

  it('an online code is setting until the device reports holding a config version with it, then set', async () => {
    await connect();
    const first = latest();
    const code = await create(lockId, { name: 'Courier', code: '606060' });
    expect(code.status).toBe('setting');
    const config = await configWith((c) => (c.accessCodes ?? []).some((a) => a.accessCodeId === code.accessCodeId));
    const entry = config.accessCodes!.find((a) => a.accessCodeId === code.accessCodeId)!;
    expect(entry).toEqual({ accessCodeId: code.accessCodeId, hash: hashAccessCode(config.accessCodeSalt!, '606060'), start: null, end: null });
    expect(jwsOf.get(config.version)).not.toContain('606060');
    expect(JSON.stringify(config)).not.toContain('606060');
    await t.app.deviceRuntime.settled();
    const [row] = await rowsOf(lockId);
    expect(row!.configVersion).toBe(config.version);

    expect((await list(lockId))[0]!.status).toBe('setting');
    await reportState(first.version);
    expect((await list(lockId))[0]!.status).toBe('setting');
    await reportState(config.version);
    expect((await list(lockId))[0]!.status).toBe('set');
    // A version never published is not believed beyond what was published.
    await reportState(config.version + 1000);
    const [deviceRow] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(deviceRow!.configAckedVersion).toBe(deviceRow!.configVersion);
  });

  it('the device’s own controller takes the published codes: online, offline from its secret, and refuses a withdrawn one', async () => {
    await connect();
    const controller = new LockController({ lockId, platformCa: device.caCertificates[1]!, offlineCodeSecret: device.offlineCodeSecret });
    const online = await create(lockId, { name: 'Keyholder', code: '13572468' });
    const { start, end } = windowNow();
    const offline = await create(lockId, { name: 'Engineer', kind: 'offline', start, end });
    expect(offline.code).toBe(offlineAccessCode(device.offlineCodeSecret!, lockId, start, end));
    expect(offline.status).toBe('set');

    const withOnline = await configWith((c) => (c.accessCodes ?? []).some((a) => a.accessCodeId === online.accessCodeId));
    expect(controller.applyConfig(jwsOf.get(withOnline.version)!).ok).toBe(true);
    expect((await controller.enterCode('13572468')).outcome).toBe('DONE');
    expect((await controller.enterCode(offline.code)).outcome).toBe('DONE');

    expect((await withdraw(lockId, offline.accessCodeId)).statusCode).toBe(204);
    const withWithdrawn = await configWith((c) => (c.withdrawnOfflineCodes ?? []).some((a) => a.accessCodeId === offline.accessCodeId));
    expect(withWithdrawn.withdrawnOfflineCodes).toEqual([{ accessCodeId: offline.accessCodeId, hash: hashAccessCode(withWithdrawn.accessCodeSalt!, offline.code), start, end }]);
    expect(JSON.stringify(withWithdrawn)).not.toContain(offline.code);
    expect(controller.applyConfig(jwsOf.get(withWithdrawn.version)!).ok).toBe(true);
    expect(await controller.enterCode(offline.code)).toMatchObject({ outcome: 'REFUSED', reason: keypadRefusals.withdrawn });

    expect((await withdraw(lockId, online.accessCodeId)).statusCode).toBe(204);
    const withoutOnline = await configWith((c) => c.version > withWithdrawn.version && !(c.accessCodes ?? []).some((a) => a.accessCodeId === online.accessCodeId));
    expect(controller.applyConfig(jwsOf.get(withoutOnline.version)!).ok).toBe(true);
    expect((await controller.enterCode('13572468')).outcome).toBe('REFUSED');
    await controller.close();
  });

  it('a new device for the lock: offline codes of the earlier secret are gone, online codes wait for it again', async () => {
    await connect();
    const online = await create(lockId, { name: 'Stays', code: '112233' });
    const { start, end } = windowNow();
    await create(lockId, { name: 'Goes', kind: 'offline', start, end });
    await configWith((c) => (c.accessCodes ?? []).some((a) => a.accessCodeId === online.accessCodeId));
    await reportState(latest().version);
    expect((await list(lockId)).map((c) => [c.name, c.status])).toEqual([
      ['Stays', 'set'],
      ['Goes', 'set'],
    ]);
    client.end(true);
    await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
    expect((await list(lockId)).map((c) => [c.name, c.status])).toEqual([['Stays', 'setting']]);

    // Unbound, the lock is a virtual one again: the device's offline codes go, its online codes are set.
    await create(lockId, { name: 'Device’s', kind: 'offline', start, end });
    const unbound = await call('DELETE', `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/device`);
    expect(unbound.statusCode).toBe(204);
    expect((await list(lockId)).map((c) => [c.name, c.status])).toEqual([['Stays', 'set']]);
  });
});

describe('the code in the log', () => {
  it('appears in no log line of a service at LOG_LEVEL=trace with its access log, whatever is done with it', async () => {
    const lines: string[] = [];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-codes-log-'));
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'trace', ACCESS_LOG: 'true', PUBLIC_URL: 'http://localhost:3000', RATE_LIMIT_MAX: '100000', SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY });
    const logged: FastifyInstance = await buildApp(config, { database: t.database, logStream: { write: (line: string) => void lines.push(line) } });
    try {
      await logged.ready();
      const lockId = await newLock();
      const inject = (method: Method, url: string, payload?: object) => logged.inject({ method, url, headers: bearer(sandbox.owner.token), ...(payload ? { payload } : {}) });
      const online = (await inject('POST', codesUrl(lockId), { name: 'Logged', code: '73946105' })).json() as AccessCode;
      const { start, end } = windowNow();
      const offline = (await inject('POST', codesUrl(lockId), { name: 'Logged offline', kind: 'offline', start, end })).json() as AccessCode;
      await inject('GET', codesUrl(lockId));
      await inject('POST', `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/keypad`, { code: online.code });
      await inject('POST', `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/keypad`, { code: offline.code });
      await inject('DELETE', `${codesUrl(lockId)}/${online.accessCodeId}`);
      expect(lines.length).toBeGreaterThan(5);
      expect(lines.filter((line) => line.includes(online.code) || line.includes(offline.code))).toEqual([]);
      const entries = await activityOf(lockId);
      expect(entries.length).toBeGreaterThanOrEqual(3);
      expect(JSON.stringify(entries)).not.toMatch(new RegExp(`${online.code}|${offline.code}`));
    } finally {
      await logged.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a code’s lock', () => {
  it('the lock’s codes go with it', async () => {
    const lockId = await newLock();
    await create(lockId, { name: 'Gone', code: '4040' });
    const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, headers: bearer(sandbox.owner.token) });
    expect(res.statusCode).toBe(204);
    expect(await t.database.db.select().from(accessCodes).where(and(eq(accessCodes.lockId, lockId)))).toEqual([]);
  });
});
