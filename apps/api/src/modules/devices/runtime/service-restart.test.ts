import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { MqttClient } from 'mqtt';
import { DEFAULT_OFFLINE_GRACE_S, deviceTopic, type DeviceConfig } from '@latchkey/contract';
import { deviceConnections, instanceHeartbeats, lockDevices, locks } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { createLock, createSandbox, type Sandbox } from '../../../../test/fixtures/operations.js';
import { reissueInterval } from './config-reissue.js';

/**
 * A restarted service and the devices that come back to it. It knows which config each device holds (the
 * database recorded it when it was published): a device that comes back holding its current config is not
 * issued it again; one whose config changed, or is due again, is. On the embedded database it stands alone:
 * no instance before it holds a device any more.
 */
let t: TestApp;
let sandbox: Sandbox;
/** The service running now: the test app, then each instance started in its place. */
let current: { app: FastifyInstance; close: () => Promise<void> };
let lockId: string;
let device: ProvisionedDevice;
let client: MqttClient;
let configs: DeviceConfig[];

const readConfig = (payload: Buffer) => JSON.parse(Buffer.from(payload.toString().split('.')[1]!, 'base64url').toString()) as DeviceConfig;
const deviceRow = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId)))[0]!;

/** The device connects to the running service, takes its configs as they come, and says it is online. */
async function comeOnline(): Promise<void> {
  client = await connectMqtt(current.app.mqtt.port!, { ...deviceTls(device), clientId: device.deviceId });
  client.on('message', (_topic, payload) => configs.push(readConfig(payload)));
  await client.subscribeAsync(deviceTopic(device.deviceId, 'config'), { qos: 1 });
  await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
  await current.app.deviceRuntime.settled();
}

/**
 * Once what the service sent the device so far has reached it: the broker's answer to a publish of the
 * device comes after whatever it was sending the device before.
 */
async function delivered(): Promise<void> {
  await current.app.deviceRuntime.configs.idle();
  await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
  await current.app.deviceRuntime.settled();
}

/**
 * The device goes offline (as its Last Will says), and the service stops and starts again on the same
 * database; `whileDown` runs while no service does.
 */
async function restart(whileDown = async () => {}): Promise<void> {
  await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'offline', { qos: 1, retain: true });
  await current.app.deviceRuntime.settled();
  await client.endAsync();
  await current.close();
  await whileDown();
  current = await t.secondInstance();
  await current.app.mqtt.listen();
}

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  await t.app.mqtt.listen();
  current = { app: t.app, close: () => t.app.close() };
  sandbox = await createSandbox(t);
});
afterAll(async () => {
  // The test app itself was closed by the first restart: only the instance in its place is left.
  if (current.app !== t.app) await current.close();
  await t?.close();
});

beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 7 });
  device = await provisionDevice({ ...t, app: current.app }, sandbox.owner.token, sandbox.applicationId, lockId);
  configs = [];
  await comeOnline();
  await delivered();
  expect(configs.map((c) => c.version)).toEqual([1]);
});
afterEach(async () => {
  await client?.endAsync();
});

describe('a restarted service', () => {
  it('does not issue again a config its device holds, unchanged and not yet due', async () => {
    const before = await deviceRow();
    expect(before).toMatchObject({ configVersion: 1, configGraceSeconds: DEFAULT_OFFLINE_GRACE_S, configHash: expect.any(String) });
    expect(Math.floor(before.configIssuedAt!.getTime() / 1000)).toBe(configs[0]!.issuedAt);
    await restart();
    await comeOnline();
    await delivered();
    expect(configs.map((c) => c.version)).toEqual([1]);
    expect(await deviceRow()).toMatchObject({ configVersion: 1, configHash: before.configHash });
    // The restarted service still knows what the device was sent: a last config goes one version above it.
    expect(current.app.deviceRuntime.reissuer.lastSentTo(device.deviceId)).toMatchObject({ lockId, version: 1 });
  });

  it('issues the config again when it changed while the service was down', async () => {
    await restart(async () => {
      await t.database.db.update(locks).set({ unlockTime: 9 }).where(eq(locks.id, lockId));
    });
    await comeOnline();
    await delivered();
    expect(configs.map((c) => [c.version, c.unlockTime])).toEqual([
      [1, 7],
      [2, 9],
    ]);
  });

  it('issues the config again when half its grace has passed', async () => {
    await restart(async () => {
      await t.database.db
        .update(lockDevices)
        .set({ configIssuedAt: sql`now() - make_interval(secs => ${reissueInterval(DEFAULT_OFFLINE_GRACE_S) + 1})` })
        .where(eq(lockDevices.id, device.deviceId));
    });
    await comeOnline();
    await delivered();
    expect(configs.map((c) => c.version)).toEqual([1, 2]);
    expect(configs[1]!.issuedAt).toBeGreaterThanOrEqual(configs[0]!.issuedAt!);
    expect(await deviceRow()).toMatchObject({ configVersion: 2 });
  });
});

describe('a device coming online whose config falls due at that moment', () => {
  it('is sent one new config, not one for each reason', async () => {
    current.app.deviceRuntime.configs.deviceOnline(lockId, true);
    current.app.deviceRuntime.configs.reissue(lockId);
    await delivered();
    expect(configs.map((c) => c.version)).toEqual([1, 2]);
  });
});

describe('the instance before a restart', () => {
  it('holds no device once a standalone broker starts (PGlite); with PostgreSQL its holdings stay, for its peers to record offline', async () => {
    await restart(async () => {
      // An instance that beats still: with PostgreSQL, none of its peers takes it for a crashed one.
      await t.database.db.insert(instanceHeartbeats).values({ instanceId: 'stopped' }).onConflictDoNothing();
      await t.database.db
        .insert(deviceConnections)
        .values({ deviceId: device.deviceId, instanceId: 'stopped', since: Date.now() })
        .onConflictDoUpdate({ target: deviceConnections.deviceId, set: { instanceId: 'stopped' } });
    });
    const held = await t.database.db.select().from(deviceConnections).where(eq(deviceConnections.instanceId, 'stopped'));
    expect(held.map((row) => row.deviceId)).toEqual(t.database.kind === 'pglite' ? [] : [device.deviceId]);
  });
});
