import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { WEBHOOK_EVENTS, deviceErrors, type Lock } from '@latchkey/contract';
import { webhookDeliveries, webhooks } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { provisionDevice } from '../../../test/fixtures/devices.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { activityCount, appUserToken, certify, createLock, createSandbox, execute, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * A sandbox lock made to report what a door reports (POST …/simulate/{kind}), and who an unlock through
 * the cloud is logged and announced as: the method (an application's user, the portal, a tile page) and
 * the source (the platform decided it).
 */
let t: TestApp;
let sandbox: Sandbox;
let alice: KeyHolder;
let lockId: string;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

const simulate = (kind: string, payload?: unknown, lock = lockId) =>
  t.app.inject({
    method: 'POST',
    url: `/api/platform/application/${sandbox.applicationId}/lock/${lock}/simulate/${kind}`,
    headers: bearer(sandbox.owner.token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const ownerLock = async () => (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, headers: bearer(sandbox.owner.token) })).json() as Lock;
const log = () => logOf(t, sandbox, lockId);
/** The `data` of each webhook delivery of `type` about this test's lock, oldest first. */
const deliveries = async (type: string) =>
  (
    await t.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.applicationId, sandbox.applicationId), eq(webhookDeliveries.eventType, type), sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}`))
      .orderBy(webhookDeliveries.createdAt)
  ).map((row) => (row.payload as { data: Record<string, unknown> }).data);

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: [...WEBHOOK_EVENTS], secret: 'whsec_dGVzdA==' });
});
beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 5 });
  await share(t, lockId, alice.userId);
});
afterAll(async () => {
  await t?.close();
});

describe('POST …/simulate/{kind} on a sandbox lock', () => {
  it('door_opened, door_closed: 204, logged from the device, the lock’s door shown, lock.door_opened / door_closed owed', async () => {
    expect((await simulate('door_opened')).statusCode).toBe(204);
    expect((await ownerLock()).door).toBe('open');
    expect((await simulate('door_closed')).statusCode).toBe(204);
    expect((await ownerLock()).door).toBe('closed');
    expect((await log()).map((e) => [e.type, e.source])).toEqual([
      ['DOOR_CLOSED', 'device'],
      ['DOOR_OPENED', 'device'],
    ]);
    expect(await deliveries('lock.door_opened')).toEqual([expect.objectContaining({ lockId, deviceId: null, source: 'device', offline: false })]);
    expect(await deliveries('lock.door_closed')).toHaveLength(1);
  });

  it('battery {value}: 204, its level logged and shown; below 20 raises low_battery and device.low_battery', async () => {
    expect((await simulate('battery', { value: 64 })).statusCode).toBe(204);
    expect((await simulate('battery', { value: 9 })).statusCode).toBe(204);
    const lock = await ownerLock();
    expect(lock).toMatchObject({ battery: 9, alarms: ['low_battery'] });
    expect((await log()).map((e) => [e.type, e.value])).toEqual([
      ['BATTERY', 9],
      ['BATTERY', 64],
    ]);
    expect(await deliveries('device.low_battery')).toEqual([expect.objectContaining({ battery: 9 })]);
  });

  it('jammed, tampered: 204, their alarms shown and device.jammed / device.tampered owed', async () => {
    expect((await simulate('jammed')).statusCode).toBe(204);
    expect((await simulate('tampered')).statusCode).toBe(204);
    expect((await ownerLock()).alarms?.sort()).toEqual(['jammed', 'tampered']);
    expect((await log()).map((e) => e.type)).toEqual(['TAMPERED', 'JAMMED']);
    expect(await deliveries('device.jammed')).toHaveLength(1);
    expect(await deliveries('device.tampered')).toHaveLength(1);
  });

  it('offline: the lock is not connected, device.offline owed once, an unlock answered as a disconnected device; online undoes it', async () => {
    expect((await simulate('offline')).statusCode).toBe(204);
    expect((await simulate('offline')).statusCode).toBe(204);
    const lock = await ownerLock();
    expect(lock.state.connected).toBe(false);
    expect(lock.alarms).toEqual([]);
    expect(await deliveries('device.offline')).toEqual([expect.objectContaining({ lockId, deviceId: null })]);
    const refused = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    expect(refused.statusCode).toBe(503);
    expect(refused.json().message).toBe(deviceErrors.offline);
    expect((await ownerLock()).state.locked).toBe(true);

    expect((await simulate('online')).statusCode).toBe(204);
    expect((await ownerLock()).state.connected).toBe(true);
    expect(await deliveries('device.online')).toHaveLength(1);
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(204);
  });

  it('what it reports while offline is marked as decided offline', async () => {
    await simulate('offline');
    expect((await simulate('door_opened')).statusCode).toBe(204);
    await simulate('online');
    expect((await simulate('door_closed')).statusCode).toBe(204);
    expect((await log()).map((e) => [e.type, e.offline])).toEqual([
      ['DOOR_CLOSED', false],
      ['DOOR_OPENED', true],
    ]);
    expect(await deliveries('lock.door_opened')).toEqual([expect.objectContaining({ offline: true })]);
  });

  it('an unlock that took the lock while it was online is refused once it goes offline (its standing kept by the instance)', async () => {
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(204);
    await simulate('offline');
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(503);
  });

  it('on a lock bound to a device: 409 with the reason, nothing logged', async () => {
    await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
    for (const kind of ['door_opened', 'offline']) {
      const res = await simulate(kind);
      expect(res.statusCode).toBe(409);
      expect(res.json().message).toBe(deviceErrors.simulateDeviceBacked);
    }
    expect(await activityCount(t, lockId)).toBe(0);
  });

  it('bad input: 400 with a message, nothing logged', async () => {
    for (const [kind, body] of [
      ['battery', undefined],
      ['battery', {}],
      ['battery', { value: 101 }],
      ['battery', { value: -1 }],
      ['battery', { value: 12.5 }],
      ['battery', { value: '50' }],
      ['exploded', undefined],
    ] as const) {
      const res = await simulate(kind, body);
      expect(res.statusCode, `${kind} ${JSON.stringify(body)}`).toBe(400);
      expect(res.json().message).toBeTruthy();
    }
    expect(await activityCount(t, lockId)).toBe(0);
    expect((await ownerLock()).battery).toBeNull();
  });

  it('a stranger’s lock is 404', async () => {
    const other = await createSandbox(t);
    const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/jammed`, headers: bearer(other.owner.token) });
    expect(res.statusCode).toBe(404);
  });
});

describe('a virtual lock’s keypad', () => {
  it('logs each code as its controller decides it, from the device, with the code; a code that holds opens the lock', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/access-code`,
      headers: bearer(sandbox.owner.token),
      payload: { name: 'Cleaner', code: '246810' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { accessCodeId } = created.json() as { accessCodeId: string };
    expect((await simulate('keypad', { code: '246810' })).json()).toMatchObject({ outcome: 'DONE' });
    expect((await simulate('keypad', { code: '135790' })).json()).toMatchObject({ outcome: 'REFUSED' });
    const fromKeypad = (await log()).filter((e) => e.source === 'device').reverse();
    expect(fromKeypad.map((e) => [e.type, e.method, e.accessCodeId, e.rejected])).toEqual([
      ['UNLOCK', 'access_code', accessCodeId, false],
      ['UNLOCK', 'access_code', null, true],
    ]);
    expect((await ownerLock()).state.locked).toBe(false);
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'access_code', accessCodeId, source: 'device', deviceId: null })]);
  });
});

describe('how an unlock through the cloud is logged and announced', () => {
  it('an application’s user (an SDK, a phone): mobile_key, from the platform', async () => {
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(204);
    expect((await log())[0]).toMatchObject({ type: 'UNLOCK', method: 'mobile_key', source: 'platform', offline: false, accessCodeId: null, value: null });
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'mobile_key', source: 'platform', accessCodeId: null })]);
  });

  it('the portal’s own unlock: console', async () => {
    const owner = await certify(t, sandbox.owner.token);
    expect((await execute(t, lockId, owner.token, signOperation(owner, lockId, UNLOCK))).statusCode).toBe(204);
    expect((await log())[0]).toMatchObject({ type: 'UNLOCK', method: 'console', source: 'platform' });
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'console' })]);
  });

  it('a tile page’s unlock: tile', async () => {
    const { token } = await t.app.tokens.signLockUser({ sub: alice.userId, app: sandbox.applicationId }, 3600);
    const holder = await certify(t, token);
    expect((await execute(t, lockId, token, signOperation(holder, lockId, UNLOCK))).statusCode).toBe(204);
    expect((await log())[0]).toMatchObject({ type: 'UNLOCK', method: 'tile', source: 'platform' });
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'tile', source: 'platform' })]);
  });

  it('a refused unlock carries the method too, in the log and in lock.unlock_refused', async () => {
    const [other] = [await createLock(t, sandbox.applicationId)];
    lockId = other;
    // Not shared with alice: refused.
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(403);
    expect((await log())[0]).toMatchObject({ type: 'UNLOCK', rejected: true, method: 'mobile_key', source: 'platform' });
    expect(await deliveries('lock.unlock_refused')).toEqual([expect.objectContaining({ method: 'mobile_key', source: 'platform', accessCodeId: null })]);
  });
});
