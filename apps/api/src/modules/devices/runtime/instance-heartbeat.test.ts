import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { deviceErrors, deviceTopic } from '@latchkey/contract';
import { deviceConnections, instanceHeartbeats, lockDevices, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { closed, connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type KeyHolder, type Sandbox } from '../../../../test/fixtures/operations.js';
import { DEAD_AFTER_S } from './instance-heartbeat.js';

/**
 * The instances on one database heartbeat and record which of them holds each device; the devices of one
 * that went silent (a crash: no Last Will) are recorded offline by the others, device.offline announced,
 * and an unlock for one answers 503 at once.
 */
let t: TestApp;
let sandbox: Sandbox;
let port: number;
let alice: KeyHolder;
let lockId: string;
let device: ProvisionedDevice;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0', DEVICE_TIMEOUT_SECONDS: '5' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: ['device.online', 'device.offline'], secret: 'whsec_dGVzdA==' });
});
beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId);
  await share(t, lockId, alice.userId);
  device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
});
afterAll(() => t?.close());

const heartbeat = () => t.app.instanceHeartbeat!;
const holder = async () => (await t.database.db.select().from(deviceConnections).where(eq(deviceConnections.deviceId, device.deviceId)))[0]?.instanceId ?? null;
const connected = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId)))[0]!.connected;
const offlineWebhooks = async () =>
  (
    await t.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.eventType, 'device.offline'), sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}`))
  ).length;

/** The device as another instance's broker held it before that instance went silent: online, held there. */
async function heldBy(instanceId: string, lastSeenSecondsAgo: number | null) {
  await t.database.db.update(lockDevices).set({ connected: true, presenceAnnounced: true, presenceChangedAt: new Date(Date.now() - 60_000) }).where(eq(lockDevices.id, device.deviceId));
  if (lastSeenSecondsAgo !== null)
    await t.database.db
      .insert(instanceHeartbeats)
      .values({ instanceId, lastSeen: new Date(Date.now() - lastSeenSecondsAgo * 1000) })
      .onConflictDoUpdate({ target: instanceHeartbeats.instanceId, set: { lastSeen: new Date(Date.now() - lastSeenSecondsAgo * 1000) } });
  await t.database.db.insert(deviceConnections).values({ deviceId: device.deviceId, instanceId, since: Date.now() });
}

describe('which instance holds a device', () => {
  it('is this one while its broker holds the device’s connection, and none once it ends', async () => {
    const client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    await heartbeat().flushed();
    expect(await holder()).toBe(heartbeat().instanceId);
    client.end(true);
    await closed(client);
    expect(await eventually(async () => (await heartbeat().flushed(), (await holder()) === null))).toBe(true);
  });
});

describe('the devices of an instance that went silent', () => {
  it(`are recorded offline by a peer once it has been silent for more than ${DEAD_AFTER_S} s, device.offline is announced, and an unlock answers 503 at once`, async () => {
    await heldBy('crashed-instance', DEAD_AFTER_S + 1);
    const before = await offlineWebhooks();
    expect(await heartbeat().beat()).toContain(device.deviceId);
    expect(await connected()).toBe(false);
    expect(await holder()).toBeNull();
    expect(await offlineWebhooks()).toBe(before + 1);

    // 503 without publishing: a 504 would have meant waiting for a device no broker holds.
    const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ message: deviceErrors.offline });

    // Recorded once: a second beat finds nothing left of it.
    expect(await heartbeat().beat()).not.toContain(device.deviceId);
    expect(await offlineWebhooks()).toBe(before + 1);
  });

  it('an instance that never heartbeat (it crashed before its first beat) counts as silent', async () => {
    await heldBy('never-beat', null);
    expect(await heartbeat().beat()).toContain(device.deviceId);
    expect(await connected()).toBe(false);
  });

  it('are left alone while their instance heartbeats, and when the device has reconnected to another instance', async () => {
    await heldBy('live-instance', 1);
    expect(await heartbeat().beat()).not.toContain(device.deviceId);
    expect(await connected()).toBe(true);
    expect(await holder()).toBe('live-instance');

    // It went silent, but the device came back on this instance first: it is this one's now.
    await t.database.db.update(instanceHeartbeats).set({ lastSeen: new Date(Date.now() - (DEAD_AFTER_S + 5) * 1000) }).where(eq(instanceHeartbeats.instanceId, 'live-instance'));
    const client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    await heartbeat().flushed();
    expect(await holder()).toBe(heartbeat().instanceId);
    expect(await heartbeat().beat()).not.toContain(device.deviceId);
    expect(await connected()).toBe(true);
    client.end(true);
    await closed(client);
  });
});

describe('an instance that was silent itself (its database out of reach) while its broker kept its devices', () => {
  it('claims them again and records them online at its next beat, once a peer may have recorded them offline', async () => {
    const client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    await heartbeat().flushed();
    expect(await holder()).toBe(heartbeat().instanceId);
    // As a peer did it: this instance looked dead, its device was recorded offline and its holding removed.
    await t.database.db.update(instanceHeartbeats).set({ lastSeen: new Date(Date.now() - (DEAD_AFTER_S + 5) * 1000) }).where(eq(instanceHeartbeats.instanceId, heartbeat().instanceId));
    await t.database.db.delete(deviceConnections).where(eq(deviceConnections.deviceId, device.deviceId));
    await t.database.db.update(lockDevices).set({ connected: false }).where(eq(lockDevices.id, device.deviceId));

    await heartbeat().beat();
    expect(await holder()).toBe(heartbeat().instanceId);
    expect(await connected()).toBe(true);
    // A beat on time changes nothing.
    await t.database.db.update(lockDevices).set({ connected: false }).where(eq(lockDevices.id, device.deviceId));
    await heartbeat().beat();
    expect(await connected()).toBe(false);
    client.end(true);
    await closed(client);
  });
});
