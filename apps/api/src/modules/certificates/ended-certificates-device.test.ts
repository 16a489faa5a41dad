import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { deviceOperationMessageSchema, deviceTopic, operationErrors, type DeviceConfigUser } from '@latchkey/contract';
import { LockController } from '@latchkey/device';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../test/fixtures/devices.js';
import { bearer, createOwner, resetPassword } from '../../../test/fixtures/platform-users.js';
import {
  activityCount,
  appUserToken,
  certify,
  createLock,
  createSandbox,
  execute,
  logOf,
  share,
  signOperation,
  type KeyHolder,
  type Sandbox,
} from '../../../test/fixtures/operations.js';

/**
 * A device-backed lock through the embedded broker over mutual TLS: the "device" is an MQTT client with its
 * provisioned certificate, deciding with the real LockController of @latchkey/device from the configs it
 * receives. A password reset puts the owner's certifiedAfter in the next config, and the lock then refuses
 * an operation signed under an earlier certificate, handed to it directly as at its local endpoint, while
 * the platform refuses it without asking the device. Removing an application user or deleting a co-owner's
 * account takes them out of the next config, and the lock refuses what they signed before.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let device: ProvisionedDevice;
let client: MqttClient;
let controller: LockController;
/** Operations the platform handed to the device. */
let relayed = 0;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

const topic = (kind: Parameters<typeof deviceTopic>[1]) => deviceTopic(device.deviceId, kind);

beforeAll(async () => {
  t = await createTestApp({ DEVICE_TIMEOUT_SECONDS: '5', MQTT_PORT: '0' });
  const port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 3 });
  device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  // The platform CA, as provisioning gave it: the only thing the lock trusts.
  controller = new LockController({ lockId, platformCa: device.caCertificates[1]! });
  client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
  client.on('message', (received, payload) => {
    if (received === topic('config')) return void controller.applyConfig(payload.toString());
    if (received !== topic('op')) return;
    relayed++;
    const { requestId, jws } = deviceOperationMessageSchema.parse(JSON.parse(payload.toString()));
    void controller.handle(jws).then(({ outcome, reason, state }) =>
      client.publishAsync(topic('result'), JSON.stringify({ requestId, outcome, reason, state: { locked: state.locked } }), { qos: 1 }),
    );
  });
  await client.subscribeAsync([topic('op'), topic('config')], { qos: 1 });
  await client.publishAsync(topic('presence'), 'online', { qos: 1, retain: true });
  expect(await eventually(() => configUser(sandbox.owner.userId) !== undefined, 10_000)).toBe(true);
});
afterAll(async () => {
  client?.end(true);
  await controller?.close();
  await t?.close();
});

const configUser = (userId: string): DeviceConfigUser | undefined => controller.config?.users.find((u) => u.userId === userId);

/** What the lock decides of an operation handed to it directly (its local endpoint, the command line). */
const decidedLocally = async (holder: KeyHolder) => controller.handle(signOperation(holder, lockId, UNLOCK));


describe('a device-backed lock and ended certificates', () => {
  it('after a password reset, the next config carries the owner’s certifiedAfter and the lock refuses the earlier certificate; the platform refuses it without asking the device', async () => {
    const before = await certify(t, sandbox.owner.token);
    expect(configUser(sandbox.owner.userId)?.certifiedAfter ?? null).toBeNull();
    // Through the platform and the device: this instance now keeps the owner's standing.
    expect((await execute(t, lockId, before.token, signOperation(before, lockId, UNLOCK))).statusCode).toBe(204);
    expect((await decidedLocally(before)).outcome).toBe('DONE');

    const { authToken } = await resetPassword(t, sandbox.owner.userId, 'a-new-password');
    sandbox.owner.token = authToken;
    expect(await eventually(() => typeof configUser(sandbox.owner.userId)?.certifiedAfter === 'number', 10_000)).toBe(true);
    expect(await decidedLocally(before)).toMatchObject({ outcome: 'REFUSED', reason: operationErrors.certificateRevoked });

    const handed = relayed;
    const logged = await activityCount(t, lockId);
    const refused = await execute(t, lockId, authToken, signOperation(before, lockId, UNLOCK));
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ code: 403, message: operationErrors.certificateRevoked });
    expect(relayed).toBe(handed);
    expect(await activityCount(t, lockId)).toBe(logged + 1);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({
      rejected: true,
      reason: operationErrors.certificateRevoked,
    });

    // A certificate issued after the reset opens, through the platform and at the lock.
    const after = await certify(t, authToken);
    expect((await execute(t, lockId, authToken, signOperation(after, lockId, UNLOCK))).statusCode).toBe(204);
    expect(relayed).toBe(handed + 1);
    expect((await decidedLocally(after)).outcome).toBe('DONE');
  });

  it('removing an application user, or deleting a co-owner’s account, takes them out of the next config: the lock refuses what they signed', async () => {
    const alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
    await share(t, lockId, alice.userId);
    const coOwner = await createOwner(t);
    const added = await t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/owner`, headers: bearer(sandbox.owner.token), payload: { userId: coOwner.userId } });
    expect(added.statusCode, added.body).toBeLessThan(300);
    expect(await eventually(() => configUser(alice.userId) !== undefined && configUser(coOwner.userId) !== undefined, 10_000)).toBe(true);
    const bob = await certify(t, coOwner.token);
    expect((await decidedLocally(alice)).outcome).toBe('DONE');
    expect((await decidedLocally(bob)).outcome).toBe('DONE');

    const removed = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${sandbox.applicationId}/user`, headers: bearer(sandbox.owner.token), payload: { userId: alice.userId } });
    expect(removed.statusCode, removed.body).toBe(204);
    const deleted = await t.app.inject({ method: 'DELETE', url: '/api/account', headers: bearer(coOwner.token) });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await eventually(() => configUser(alice.userId) === undefined && configUser(coOwner.userId) === undefined, 10_000)).toBe(true);
    expect(await decidedLocally(alice)).toMatchObject({ outcome: 'REFUSED', reason: operationErrors.noAccess });
    expect(await decidedLocally(bob)).toMatchObject({ outcome: 'REFUSED', reason: operationErrors.noAccess });
    // The platform refuses them too: neither holds a way in any more.
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(403);
    expect((await execute(t, lockId, bob.token, signOperation(bob, lockId, UNLOCK))).statusCode).toBe(401);
  });
});
