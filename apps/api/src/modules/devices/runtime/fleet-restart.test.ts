import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { MqttClient } from 'mqtt';
import { deviceTopic, type DeviceConfig } from '@latchkey/contract';
import { locks } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { createLock, createSandbox, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * A fleet back after a restart, its devices coming online together: their configs are read together and
 * compared with the ones they hold, not read one device at a time. A device whose lock changed while the
 * service was down is sent one new config; the others, unchanged and not yet due, nothing.
 */
const DEVICES = 8;
let t: TestApp;
let sandbox: Sandbox;
let current: { app: FastifyInstance; close: () => Promise<void> };
const devices: ProvisionedDevice[] = [];
let clients: MqttClient[] = [];
/** Per device, the versions and unlock times of the configs it was sent, in order. */
const received = new Map<string, [number, number][]>();

const readConfig = (payload: Buffer) => JSON.parse(Buffer.from(payload.toString().split('.')[1]!, 'base64url').toString()) as DeviceConfig;
const sqlText = (query: unknown) => (t.database.db as unknown as { dialect: { sqlToQuery(q: SQL): { sql: string } } }).dialect.sqlToQuery(query as SQL).sql;

/** Every device connects to the running service, takes its configs as they come, and says it is online, all at once. */
async function comeOnline(): Promise<void> {
  clients = await Promise.all(
    devices.map(async (device) => {
      const client = await connectMqtt(current.app.mqtt.port!, { ...deviceTls(device), clientId: device.deviceId });
      client.on('message', (_topic, payload) => {
        const config = readConfig(payload);
        received.get(device.deviceId)!.push([config.version, config.unlockTime]);
      });
      await client.subscribeAsync(deviceTopic(device.deviceId, 'config'), { qos: 1 });
      return client;
    }),
  );
  await say('online');
}

async function say(presence: 'online' | 'offline'): Promise<void> {
  await Promise.all(clients.map((client, i) => client.publishAsync(deviceTopic(devices[i]!.deviceId, 'presence'), presence, { qos: 1, retain: true })));
  await current.app.deviceRuntime.settled();
}

/** Once what the service sent the devices so far has reached them: the broker answers a device's publish after what it was sending it. */
async function delivered(): Promise<void> {
  await current.app.deviceRuntime.configs.idle();
  await say('online');
}

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  await t.app.mqtt.listen();
  current = { app: t.app, close: () => t.app.close() };
  sandbox = await createSandbox(t);
  for (let i = 0; i < DEVICES; i++) {
    const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, await createLock(t, sandbox.applicationId, { unlockTime: 7 }));
    devices.push(device);
    received.set(device.deviceId, []);
  }
  await comeOnline();
  await delivered();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.endAsync()));
  if (current.app !== t.app) await current.close();
  await t?.close();
});

describe('devices coming online together after a restart', () => {
  it('have their configs read together; the one whose lock changed meanwhile is sent one new config, the others none', async () => {
    expect([...received.values()]).toEqual(devices.map(() => [[1, 7]]));
    const changed = devices[3]!;
    await say('offline');
    await Promise.all(clients.map((client) => client.endAsync()));
    await current.close();
    await t.database.db.update(locks).set({ unlockTime: 9 }).where(eq(locks.id, changed.lockId));
    current = await t.secondInstance();
    await current.app.mqtt.listen();

    const statements = vi.spyOn(current.app.db, 'execute');
    try {
      await comeOnline();
      await delivered();
      const shareReads = statements.mock.calls.filter(([query]) => sqlText(query).includes('lock_shares')).length;
      expect(shareReads).toBeGreaterThan(0);
      expect(shareReads).toBeLessThan(DEVICES);
    } finally {
      statements.mockRestore();
    }
    for (const device of devices) {
      expect(received.get(device.deviceId), device.deviceId).toEqual(device === changed ? [[1, 7], [2, 9]] : [[1, 7]]);
    }
  });
});
