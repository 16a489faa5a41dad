import { createPrivateKey, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import mqtt from 'mqtt';
import { eq } from 'drizzle-orm';
import { deviceTopic } from '@latchkey/contract';
import { eventHash, signEvent } from '@latchkey/device';
import { buildApp } from '../../../app.js';
import { lockDevices } from '../../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { deviceTls, provisionDevice } from '../../../../test/fixtures/devices.js';
import { MOSQUITTO, startMosquitto, type Mosquitto } from '../../../../test/fixtures/mosquitto.js';
import { activityCount, createLock } from '../../../../test/fixtures/operations.js';
import { createApplication, createOwner } from '../../../../test/fixtures/platform-users.js';
import { deviceCrl } from '../device-binding.service.js';

/**
 * A door's events through an external broker (Mosquitto 2, MQTT_URL) with two instances of the service:
 * each instance hears every event, and each event is still logged exactly once, the chain in step.
 */
let t: TestApp;
let broker: Mosquitto;
let instances: FastifyInstance[] = [];

beforeAll(async () => {
  if (!MOSQUITTO) return;
  t = await createTestApp();
  broker = await startMosquitto(t.app.deviceCa, await deviceCrl(t.app.db, t.app.deviceCa));
  const config = { ...t.app.config, mqtt: { ...t.app.config.mqtt, url: broker.url } };
  instances = await Promise.all([0, 1].map(() => buildApp(config, { database: t.database, logger: false })));
});
afterAll(async () => {
  await Promise.all(instances.map((app) => app.close()));
  await broker?.close();
  await t?.close();
});

describe.skipIf(!MOSQUITTO)('door events with an external broker and two instances', () => {
  it('logs each event once, whichever instances hear it, and the chain follows the last one', async () => {
    const owner = await createOwner(t);
    const applicationId = await createApplication(t, owner.userId);
    const lockId = await createLock(t, applicationId);
    const device = await provisionDevice(t, owner.token, applicationId, lockId);
    const client = await new Promise<mqtt.MqttClient>((resolve, reject) => {
      const c = mqtt.connect(broker.url, { ...deviceTls(device), reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4 });
      c.once('connect', () => resolve(c));
      c.once('error', reject);
    });
    const key = createPrivateKey(device.key.privateKeyPem);
    let prev: string | null = null;
    const types = ['door_opened', 'door_closed', 'door_opened', 'door_closed', 'jammed'] as const;
    for (const [i, type] of types.entries()) {
      const jws = signEvent({ eventId: randomUUID(), seq: i + 1, prev, at: Date.now(), type }, key, device.deviceId);
      prev = eventHash(jws);
      await client.publishAsync(deviceTopic(device.deviceId, 'event'), jws, { qos: 1 });
    }
    expect(await eventually(async () => (await activityCount(t, lockId)) >= types.length)).toBe(true);
    await Promise.all(instances.map((app) => app.deviceRuntime.settled()));
    expect(await activityCount(t, lockId)).toBe(types.length);
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row).toMatchObject({ eventSeq: types.length, eventHash: prev });
    await client.endAsync();
  });
});
