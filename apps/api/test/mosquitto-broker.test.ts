import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { and, eq } from 'drizzle-orm';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning } from '@latchkey/device';
import { MAX_DEVICE_MESSAGE_BYTES, deviceTopic } from '@latchkey/contract';
import { buildApp } from '../src/app.js';
import { lockActivity } from '../src/db/schema.js';
import { deviceCrl } from '../src/modules/devices/device-binding.service.js';
import { createTestApp, eventually, type TestApp } from './helpers.js';
import { deviceTls, provisionDevice, type ProvisionedDevice } from './fixtures/devices.js';
import { MOSQUITTO, startMosquitto, type Mosquitto } from './fixtures/mosquitto.js';
import { createLock } from './fixtures/operations.js';
import { createApplication, createOwner } from './fixtures/platform-users.js';

/**
 * The shipped Mosquitto configuration (deploy/mosquitto) as a device meets it: the client id is bound to the
 * certificate, packets are size-limited, and a device writes only the topics a device sends on.
 */

let t: TestApp;
let broker: Mosquitto;
let owner: Awaited<ReturnType<typeof createOwner>>;
let applicationId: string;
let service: MqttClient;
const open = new Set<MqttClient>();

/** Connects and resolves once the broker has answered CONNACK; rejects with the refusal. */
function connect(url: string, options: IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4, ...options });
    open.add(client);
    client.once('connect', () => resolve(client));
    client.once('error', reject);
    client.once('close', () => reject(new Error('connection closed before CONNACK')));
  });
}
const connectDevice = (device: ProvisionedDevice, clientId = device.deviceId) => connect(broker.deviceUrl, { ...deviceTls(device), clientId });
const newDevice = async () => provisionDevice(t, owner.token, applicationId, await createLock(t, applicationId));
/** Resolves when the connection has ended. */
const ended = (client: MqttClient) => new Promise<void>((resolve) => (client.connected ? client.once('close', () => resolve()) : resolve()));

/** What the service receives on `filter` from now on. */
async function listen(filter: string): Promise<{ topic: string; payload: Buffer; retain: boolean }[]> {
  const received: { topic: string; payload: Buffer; retain: boolean }[] = [];
  const prefix = filter.replace(/#$/, '');
  service.on('message', (topic, payload, packet) => {
    if (topic.startsWith(prefix)) received.push({ topic, payload, retain: packet.retain });
  });
  await service.subscribeAsync(filter, { qos: 1 });
  return received;
}

beforeAll(async () => {
  if (!MOSQUITTO) return;
  t = await createTestApp();
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId);
  broker = await startMosquitto(t.app.deviceCa, await deviceCrl(t.app.db, t.app.deviceCa));
  const { key, cert } = await t.app.deviceCa.issueServiceCertificate();
  service = await connect(broker.url, { key, cert, ca: t.app.deviceCa.certificatePem, clientId: 'latchkey-service-test' });
});
afterAll(async () => {
  for (const client of open) client.end(true);
  await broker?.close();
  await t?.close();
});

describe.skipIf(!MOSQUITTO)('the shipped Mosquitto configuration', () => {
  it('a certificate connecting with another device’s client id does not disconnect that device, nor speak for it', async () => {
    const [victim, attacker] = [await newDevice(), await newDevice()];
    const received = await listen(`latchkey/d/${victim.deviceId}/#`);
    const victimClient = await connectDevice(victim);
    let victimClosed = false;
    victimClient.on('close', () => (victimClosed = true));

    // The broker takes a session over before it answers the new connection's CONNACK.
    const attackerClient = await connectDevice(attacker, victim.deviceId);
    await attackerClient.publishAsync(deviceTopic(victim.deviceId, 'state'), 'forged', { qos: 1 });
    // Taken over, the victim's connection ends instead of its publish being acknowledged.
    const outcome = await Promise.race([
      victimClient.publishAsync(deviceTopic(victim.deviceId, 'state'), 'mine', { qos: 1 }).then(() => 'acknowledged'),
      ended(victimClient).then(() => 'disconnected'),
    ]);
    expect(outcome).toBe('acknowledged');
    expect(await eventually(() => received.some((m) => m.payload.toString() === 'mine'))).toBe(true);
    expect(victimClosed).toBe(false);
    expect(victimClient.connected).toBe(true);
    expect(received.map((m) => m.payload.toString())).not.toContain('forged');
  });

  it('the service’s instances, sharing one certificate name, keep a connection each', async () => {
    const device = await newDevice();
    const { key, cert } = await t.app.deviceCa.issueServiceCertificate();
    const other = await connect(broker.url, { key, cert, ca: t.app.deviceCa.certificatePem, clientId: 'latchkey-service-other' });
    const heard = await listen(`latchkey/d/${device.deviceId}/#`);
    await other.publishAsync(deviceTopic(device.deviceId, 'op'), 'from the other instance', { qos: 1 });
    expect(await eventually(() => heard.some((m) => m.payload.toString() === 'from the other instance'))).toBe(true);
    expect(service.connected && other.connected).toBe(true);
  });

  it('a packet over the size limit closes the sender’s connection and reaches no one; a 64 KB config still reaches the device', async () => {
    const device = await newDevice();
    const received = await listen(`latchkey/d/${device.deviceId}/#`);
    const client = await connectDevice(device);
    const config = await new Promise<Buffer>((resolve) => {
      client.on('message', (topic, payload) => topic === deviceTopic(device.deviceId, 'config') && resolve(payload));
      void client.subscribeAsync(deviceTopic(device.deviceId, 'config'), { qos: 1 }).then(() =>
        service.publishAsync(deviceTopic(device.deviceId, 'config'), Buffer.alloc(MAX_DEVICE_MESSAGE_BYTES, 'c'), { qos: 1, retain: true }),
      );
    });
    expect(config.length).toBe(MAX_DEVICE_MESSAGE_BYTES);

    client.publish(deviceTopic(device.deviceId, 'state'), Buffer.alloc(1024 * 1024, 's'), { qos: 1, retain: true });
    const large = () => received.some((m) => m.topic === deviceTopic(device.deviceId, 'state'));
    const outcome = await Promise.race([ended(client).then(() => 'disconnected'), eventually(large, 10_000).then((found) => (found ? 'delivered' : 'neither'))]);
    expect(outcome).toBe('disconnected');
    // A fresh subscription gets every retained message of the device: the large one is not among them.
    const again = await connectDevice(device);
    await again.publishAsync(deviceTopic(device.deviceId, 'result'), 'after', { qos: 1 });
    expect(await eventually(() => received.some((m) => m.payload.toString() === 'after'))).toBe(true);
    expect(received.filter((m) => m.topic === deviceTopic(device.deviceId, 'state'))).toEqual([]);
  });

  it('a device cannot park retained messages on topics of its own making under its prefix', async () => {
    const device = await newDevice();
    const client = await connectDevice(device);
    for (let i = 0; i < 30; i++) await client.publishAsync(`latchkey/d/${device.deviceId}/park/${i}`, Buffer.alloc(1024, 'p'), { qos: 1, retain: true });
    await client.publishAsync(deviceTopic(device.deviceId, 'state'), 'retained state', { qos: 1, retain: true });
    // A new subscriber gets the retained messages at once, before anything published after it subscribed.
    const received = await listen(`latchkey/d/${device.deviceId}/#`);
    await service.publishAsync(deviceTopic(device.deviceId, 'op'), 'marker', { qos: 1 });
    expect(await eventually(() => received.some((m) => m.payload.toString() === 'marker'))).toBe(true);
    expect(received.filter((m) => m.retain).map((m) => m.topic)).toEqual([deviceTopic(device.deviceId, 'state')]);
    // Nor write what only the platform sends it.
    await client.publishAsync(deviceTopic(device.deviceId, 'config'), 'forged config', { qos: 1 });
    await client.publishAsync(deviceTopic(device.deviceId, 'result'), 'after the forgery', { qos: 1 });
    expect(await eventually(() => received.some((m) => m.payload.toString() === 'after the forgery'))).toBe(true);
    expect(received.map((m) => m.payload.toString())).not.toContain('forged config');
  });

  it('a door’s signed event reaches the platform through the broker and is logged as the door’s report', async () => {
    const lockId = await createLock(t, applicationId);
    const device = await provisionDevice(t, owner.token, applicationId, lockId);
    // An instance of the service whose broker is this Mosquitto (MQTT_URL), sharing the database.
    const platform = await buildApp({ ...t.app.config, mqtt: { ...t.app.config.mqtt, url: broker.url } }, { database: t.database, logger: false });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-mosquitto-events-'));
    const state = new StateDir(dir);
    await saveProvisioning(state, { ...device, mqttUrl: broker.deviceUrl }, device.key.privateKeyPem, 'http://127.0.0.1');
    const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'mosquitto-test', log: { info: () => undefined, warn: () => undefined }, reconnectMs: 50, maxReconnectMs: 200 });
    try {
      expect(agent.reportSensor({ type: 'door_opened' })).toBe(true);
      const logged = () => t.database.db.select().from(lockActivity).where(and(eq(lockActivity.lockId, lockId), eq(lockActivity.source, 'device')));
      expect(await eventually(async () => (await logged()).length === 1, 10_000)).toBe(true);
      expect((await logged()).map((entry) => [entry.type, entry.deviceSeq])).toEqual([['DOOR_OPENED', 1]]);
    } finally {
      await agent.stop();
      await platform.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
