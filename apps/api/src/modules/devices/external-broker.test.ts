import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import mqtt from 'mqtt';
import { eq } from 'drizzle-orm';
import { deviceTopic } from '@latchkey/contract';
import { buildApp } from '../../app.js';
import { lockDevices } from '../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { closed, createCsr, deviceTls, generateDeviceKey, provisionDevice, subscribeNext, type ProvisionedDevice } from '../../../test/fixtures/devices.js';
import { MOSQUITTO, startMosquitto, type Mosquitto } from '../../../test/fixtures/mosquitto.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { deviceCrl } from './device-binding.service.js';

let t: TestApp;
let broker: Mosquitto;
/** Two instances of the service, each a client of the same Mosquitto. */
let instances: FastifyInstance[] = [];
let owner: Awaited<ReturnType<typeof createOwner>>;
let applicationId: string;
const received: { instance: number; topic: string; payload: string }[][] = [[], []];

beforeAll(async () => {
  if (!MOSQUITTO) return;
  t = await createTestApp();
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId);
  broker = await startMosquitto(t.app.deviceCa, await deviceCrl(t.app.db, t.app.deviceCa));
  const config = { ...t.app.config, mqtt: { ...t.app.config.mqtt, url: broker.url } };
  instances = await Promise.all([0, 1].map(() => buildApp(config, { database: t.database, logger: false })));
  await Promise.all(
    instances.map((app, instance) => app.deviceBus.subscribe('latchkey/d/#', (topic, payload) => received[instance]!.push({ instance, topic, payload: payload.toString() }))),
  );
});
afterAll(async () => {
  await Promise.all(instances.map((app) => app.close()));
  await broker?.close();
  await t?.close();
});

const connect = (device: ProvisionedDevice) =>
  new Promise<mqtt.MqttClient>((resolve, reject) => {
    const client = mqtt.connect(broker.url, { ...deviceTls(device), reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4 });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
    client.once('close', () => reject(new Error('connection closed before CONNACK')));
  });
const newDevice = async () => {
  const lockId = await createLock(t, applicationId);
  return { ...(await provisionDevice(t, owner.token, applicationId, lockId)), lockId };
};
const arrivedAtBoth = (topic: string, payload: string) => received.every((list) => list.some((m) => m.topic === topic && m.payload === payload));

describe.skipIf(!MOSQUITTO)('with an external broker (Mosquitto 2, MQTT_URL)', () => {
  it('every instance connects with its service certificate; what a device publishes reaches all of them', async () => {
    expect(instances.map((app) => app.deviceBus.kind)).toEqual(['external', 'external']);
    const device = await newDevice();
    const client = await connect(device);
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    expect(await eventually(() => arrivedAtBoth(deviceTopic(device.deviceId, 'presence'), 'online'))).toBe(true);
    await client.endAsync();
  });

  it('an operation published by one instance reaches the device whose connection the broker holds', async () => {
    const device = await newDevice();
    const client = await connect(device);
    const operation = await subscribeNext(client, deviceTopic(device.deviceId, 'op'));
    await instances[1]!.deviceBus.publish(deviceTopic(device.deviceId, 'op'), '{"requestId":"r1","jws":"x"}');
    expect((await operation.next).toString()).toContain('r1');
    await client.endAsync();
  });

  it('the broker’s ACL keeps a device to its own prefix', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const client = await connect(device);
    await client.publishAsync(deviceTopic(other.deviceId, 'state'), 'forged', { qos: 1 });
    // Messages from one connection arrive in order: once this one is in, the forged one would have been.
    await client.publishAsync(deviceTopic(device.deviceId, 'state'), 'mine', { qos: 1 });
    expect(await eventually(() => arrivedAtBoth(deviceTopic(device.deviceId, 'state'), 'mine'))).toBe(true);
    expect(received.flat().some((m) => m.payload === 'forged')).toBe(false);
    await client.endAsync();
  });

  it('renews a certificate through the broker, issued once however many instances receive the request', async () => {
    const device = await newDevice();
    await t.database.db.update(lockDevices).set({ certificateNotAfter: new Date(Date.now() + 20 * 86_400_000) }).where(eq(lockDevices.id, device.deviceId));
    const client = await connect(device);
    const answer = await subscribeNext(client, deviceTopic(device.deviceId, 'certificate'));
    await client.publishAsync(deviceTopic(device.deviceId, 'renew'), await createCsr(await generateDeviceKey(), `CN=${device.deviceId}`), { qos: 1 });
    const { certificate } = JSON.parse((await answer.next).toString()) as { certificate: string };
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row!.certificateSerial).toBe(new x509.X509Certificate(certificate).serialNumber.toLowerCase());
    await client.endAsync();
  });

  it('keeps only private-network direct-access endpoints: the service cannot see where a device connects from', async () => {
    const device = await newDevice();
    const client = await connect(device);
    const state = JSON.stringify({ locked: true, firmware: 'test 1', at: new Date().toISOString(), directAccessEndpoints: ['http://192.168.1.20:8080/execute', 'http://127.0.0.1:8080/execute', 'https://evil.example.com/execute'] });
    await client.publishAsync(deviceTopic(device.deviceId, 'state'), state, { qos: 1, retain: true });
    expect(await eventually(() => arrivedAtBoth(deviceTopic(device.deviceId, 'state'), state))).toBe(true);
    await Promise.all(instances.map((app) => app.deviceRuntime.settled()));
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row!.state?.directAccessEndpoints).toEqual(['http://192.168.1.20:8080/execute']);
    await client.endAsync();
  });

  it('refuses an unbound device’s certificate once the broker has read the CRL', async () => {
    const device = await newDevice();
    const before = await connect(device);
    await before.endAsync();
    const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${applicationId}/lock/${device.lockId}/device`, headers: bearer(owner.token) });
    expect(res.statusCode).toBe(204);
    await broker.reloadCrl((await t.app.inject({ method: 'GET', url: '/api/device-ca/crl.pem' })).body);
    const refused = await connect(device).then(
      async (client) => {
        await closed(client);
        return 'connected';
      },
      (err: Error) => err.message,
    );
    expect(refused).not.toBe('connected');
  });
});
