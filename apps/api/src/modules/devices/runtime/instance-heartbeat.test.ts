import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { DEVICE_PRESENCE_SETTLE_S, deviceErrors, deviceTopic } from '@latchkey/contract';
import { deviceConnections, instanceHeartbeats, lockDevices, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { closed, connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type KeyHolder, type Sandbox } from '../../../../test/fixtures/operations.js';
import { UNCLAIMED, recordPresence } from './device-status.js';
import { DEAD_AFTER_S } from './instance-heartbeat.js';

/**
 * The instances on one database heartbeat and record which of them holds each device; the devices of one
 * that went silent (a crash: no Last Will) are recorded offline by the others, device.offline announced,
 * and an unlock for one answers 503 at once. So are those left unclaimed too long: recorded online, or let go,
 * with no holding written since (the instance crashed before it wrote one).
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
  it('is this one while its broker holds the device’s connection, and none (unclaimed) once it ends', async () => {
    const client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    await heartbeat().flushed();
    expect(await holder()).toBe(heartbeat().instanceId);
    client.end(true);
    await closed(client);
    expect(await eventually(async () => (await heartbeat().flushed(), (await holder()) === UNCLAIMED))).toBe(true);
  });
});

describe('beats', () => {
  it('run one after another: one asked for while another runs starts when that one has ended', async () => {
    const beats = heartbeat() as unknown as { beatOnce: () => Promise<string[]> };
    const beatOnce = beats.beatOnce.bind(beats);
    let running = 0;
    let most = 0;
    const spy = vi.spyOn(beats, 'beatOnce').mockImplementation(() => {
      running++;
      most = Math.max(most, running);
      return beatOnce().finally(() => running--);
    });
    try {
      await Promise.all([heartbeat().beat(), heartbeat().beat(), heartbeat().beat()]);
      expect(spy).toHaveBeenCalledTimes(3);
      expect(most).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the devices of an instance that went silent', () => {
  it(`are recorded offline by a peer once it has been silent for more than ${DEAD_AFTER_S} s, device.offline is announced, and an unlock answers 503 at once`, async () => {
    const before = await offlineWebhooks();
    await heldBy('crashed-instance', DEAD_AFTER_S + 1);
    // Recorded by the next beat: this one, or the instance's own every two seconds if it came first (beats run
    // one after another, so this one ends after it).
    await heartbeat().beat();
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
    await heartbeat().beat();
    expect(await connected()).toBe(false);
    expect(await holder()).toBeNull();
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
    // As a peer did it: this instance looked dead, its device was recorded offline and its holding removed —
    // at once, so the instance's own beat, every two seconds, sees all of it or none.
    await t.database.db.transaction(async (tx) => {
      await tx.update(instanceHeartbeats).set({ lastSeen: new Date(Date.now() - (DEAD_AFTER_S + 5) * 1000) }).where(eq(instanceHeartbeats.instanceId, heartbeat().instanceId));
      await tx.delete(deviceConnections).where(eq(deviceConnections.deviceId, device.deviceId));
      await tx.update(lockDevices).set({ connected: false }).where(eq(lockDevices.id, device.deviceId));
    });

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

/** The device recorded online by an instance whose broker's holding of it may not be written yet. */
async function recordedOnlineUnclaimed() {
  // Online and announced a while ago, as a device that came back: a change now would be announced at once.
  await t.database.db.update(lockDevices).set({ connected: true, presenceAnnounced: true, presenceChangedAt: new Date(Date.now() - 60_000) }).where(eq(lockDevices.id, device.deviceId));
  await recordPresence(t.database.db, device.deviceId, true, DEVICE_PRESENCE_SETTLE_S, { markUnclaimed: true });
}
/** As if the device had been unclaimed for longer than DEAD_AFTER_S. */
const unclaimedLong = () =>
  t.database.db.update(deviceConnections).set({ since: Date.now() - (DEAD_AFTER_S + 1) * 1000 }).where(and(eq(deviceConnections.deviceId, device.deviceId), eq(deviceConnections.instanceId, UNCLAIMED)));
const lastSeen = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId)))[0]!.lastSeen;

describe('a device recorded online that no instance has claimed yet', () => {
  it(`is recorded offline by a peer once unclaimed for more than ${DEAD_AFTER_S} s (its broker's instance crashed before writing its holding), and an unlock answers 503 at once`, async () => {
    const before = await offlineWebhooks();
    await recordedOnlineUnclaimed();
    expect(await holder()).toBe(UNCLAIMED);
    await unclaimedLong();
    await heartbeat().beat();
    expect(await connected()).toBe(false);
    expect(await holder()).toBeNull();
    expect(await offlineWebhooks()).toBe(before + 1);
    const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ message: deviceErrors.offline });
  });

  it('is left alone while its holding may still be on its way (just connected to a live instance), and the holding claims it, whatever its time', async () => {
    await recordedOnlineUnclaimed();
    await heartbeat().beat();
    expect(await connected()).toBe(true);
    expect(await holder()).toBe(UNCLAIMED);

    // The holder's write comes: its admission was before the presence was recorded, and it takes the device all the same.
    heartbeat().holding(device.deviceId, true, Date.now() - 60_000);
    await heartbeat().flushed();
    expect(await holder()).toBe(heartbeat().instanceId);
    await heartbeat().beat();
    expect(await connected()).toBe(true);
  });

  it('once its broker has let it go, is recorded offline unless its Last Will is: then only its row goes', async () => {
    // No Last Will recorded (the instance crashed after letting it go, or the device left without one).
    let client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    client.end(true);
    await closed(client);
    expect(await eventually(async () => (await heartbeat().flushed(), (await holder()) === UNCLAIMED))).toBe(true);
    await heartbeat().beat();
    expect(await connected()).toBe(true);
    await unclaimedLong();
    await heartbeat().beat();
    expect(await connected()).toBe(false);
    expect(await holder()).toBeNull();

    // Its Last Will recorded: nothing more is recorded of it (it was last seen when it went).
    client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId, will: { topic: deviceTopic(device.deviceId, 'presence'), payload: Buffer.from('offline'), qos: 1, retain: true } });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    client.stream.destroy();
    await closed(client);
    expect(await eventually(async () => (await t.app.deviceRuntime.settled(), !(await connected())))).toBe(true);
    expect(await eventually(async () => (await heartbeat().flushed(), (await holder()) === UNCLAIMED))).toBe(true);
    const seen = await lastSeen();
    await unclaimedLong();
    await heartbeat().beat();
    expect(await holder()).toBeNull();
    expect(await lastSeen()).toEqual(seen);
  });

  it('is left unclaimed by its presence where instances may share the database (PostgreSQL), not where this one stands alone (the embedded database, whose restart records every device offline)', async () => {
    await t.app.deviceBus.publish(deviceTopic(device.deviceId, 'presence'), 'online');
    await t.app.deviceRuntime.settled();
    expect(await connected()).toBe(true);
    expect(await holder()).toBe(t.database.kind === 'pglite' ? null : UNCLAIMED);
  });
});
