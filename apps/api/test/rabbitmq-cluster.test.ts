import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import mqtt, { type MqttClient } from 'mqtt';
import { eq, sql } from 'drizzle-orm';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning } from '@latchkey/device';
import { deviceTopic } from '@latchkey/contract';
import { buildApp } from '../src/app.js';
import { lockDevices, revokedDeviceCertificates } from '../src/db/schema.js';
import { createTestApp, eventually, type TestApp } from './helpers.js';
import { createCsr, deviceTls, generateDeviceKey, provisionDevice, type ProvisionedDevice } from './fixtures/devices.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type KeyHolder, type Sandbox } from './fixtures/operations.js';
import { bearer } from './fixtures/platform-users.js';
import { startRabbitCluster, type RabbitCluster } from './fixtures/rabbitmq.js';

/**
 * Two RabbitMQ nodes clustered, configured as deploy/rabbitmq ships them, and the platform answering their
 * HTTP auth backend: a device admitted by its certificate on one node is reached by a service instance on
 * the other, is confined to its own topics, is refused once unbound or with a certificate it renewed from,
 * and survives the loss of its node.
 */

const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
const secret = randomBytes(24).toString('base64url');

let t: TestApp;
let cluster: RabbitCluster;
/** The service instance whose broker is node 2 (MQTT_URL). */
let platform: FastifyInstance;
let sandbox: Sandbox;
let alice: KeyHolder;
/** Devices reach the cluster through this TCP balancer: node 1 while it answers, then node 2. */
let balancer: net.Server;
let balancerUrl: string;
const open = new Set<MqttClient>();
const dirs: string[] = [];

/** A TCP balancer passing TLS through: each connection goes to the first upstream that accepts it. */
async function startBalancer(upstreams: () => number[]): Promise<net.Server> {
  const server = net.createServer((socket) => {
    const tryNext = (ports: number[]) => {
      const port = ports[0];
      if (port === undefined) return socket.destroy();
      const upstream = net.connect(port, '127.0.0.1');
      let reached = false;
      upstream.once('connect', () => {
        reached = true;
        socket.pipe(upstream).pipe(socket);
        upstream.on('error', () => socket.destroy());
        socket.on('error', () => upstream.destroy());
        upstream.on('close', () => socket.destroy());
        socket.on('close', () => upstream.destroy());
      });
      upstream.once('error', () => (reached ? undefined : tryNext(ports.slice(1))));
    };
    socket.on('error', () => undefined);
    tryNext(upstreams());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (url: string) => Number(new URL(url).port);

/** Connects and resolves once the broker has answered CONNACK; rejects with the refusal. */
function connect(url: string, device: ProvisionedDevice, clientId = device.deviceId): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { ...deviceTls(device), clientId, reconnectPeriod: 0, connectTimeout: 10_000, protocolVersion: 4 });
    open.add(client);
    client.once('connect', () => resolve(client));
    client.once('error', reject);
    client.once('close', () => reject(new Error('connection closed before CONNACK')));
  });
}
const newDevice = async () => {
  const lockId = await createLock({ ...t, app: platform }, sandbox.applicationId, { unlockTime: 30 });
  await share({ ...t, app: platform }, lockId, alice.userId);
  return { ...(await provisionDevice({ ...t, app: platform }, sandbox.owner.token, sandbox.applicationId, lockId)), lockId };
};
const connected = async (deviceId: string) => (await t.database.db.select({ connected: lockDevices.connected }).from(lockDevices).where(eq(lockDevices.id, deviceId)))[0]?.connected === true;
const unlock = (lockId: string) => execute({ ...t, app: platform }, lockId, alice.token, signOperation(alice, lockId, UNLOCK));

/** A DeviceAgent provisioned for `device`, told the balancer's address. */
async function runAgent(device: ProvisionedDevice): Promise<{ agent: DeviceAgent; configured: () => boolean }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-rabbitmq-device-'));
  dirs.push(dir);
  const state = new StateDir(dir);
  await saveProvisioning(state, { ...device, mqttUrl: balancerUrl }, device.key.privateKeyPem, 'http://127.0.0.1');
  const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'rabbitmq-test', log: { info: () => undefined, warn: () => undefined }, reconnectMs: 100, maxReconnectMs: 500 });
  // The device holds the lock's signed config once the platform's answer to its `online` has reached it.
  return { agent, configured: () => fs.existsSync(path.join(dir, 'config.jws')) };
}

beforeAll(async () => {
  t = await createTestApp({ HOST: '127.0.0.1', BROKER_AUTH_SECRET: secret });
  // The auth backend asks this instance; it is up before the brokers are.
  const origin = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '');
  cluster = await startRabbitCluster(t.app.deviceCa, { authUrl: `${origin}${t.app.config.apiPrefix}`, secret, count: 3 });
    platform = await buildApp({ ...t.app.config, mqtt: { ...t.app.config.mqtt, url: cluster.nodes[1]!.url } }, { database: t.database, logger: false });
  balancer = await startBalancer(() => cluster.nodes.map((node) => portOf(node.url)));
  balancerUrl = `mqtts://127.0.0.1:${(balancer.address() as net.AddressInfo).port}`;
  sandbox = await createSandbox({ ...t, app: platform });
  alice = await certify({ ...t, app: platform }, await appUserToken(sandbox, 'alice', 'alice@example.com'));
}, 150_000);

afterAll(async () => {
  for (const client of open) client.end(true);
  await platform?.close();
  balancer?.close();
  await cluster?.close();
  await t?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a RabbitMQ cluster as the device broker', () => {
  it('a device is confined to its own topics: what it writes on another’s reaches no one, and it cannot read another’s', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const heard: { topic: string; payload: string }[] = [];
    await platform.deviceBus.subscribe('latchkey/d/#', (topic, payload) => heard.push({ topic, payload: payload.toString() }));
    // The broker closes a connection whose subscription or publish it refuses.
    const reader = await connect(cluster.nodes[0]!.url, device);
    await expect(reader.subscribeAsync(deviceTopic(other.deviceId, 'op'), { qos: 1 })).rejects.toThrow(/closed/i);
    const client = await connect(cluster.nodes[0]!.url, device);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.publish(deviceTopic(other.deviceId, 'state'), 'forged', { qos: 1 });
    await closed;
    const again = await connect(cluster.nodes[0]!.url, device);
    await again.publishAsync(deviceTopic(device.deviceId, 'state'), 'mine', { qos: 1 });
    expect(await eventually(() => heard.some((m) => m.payload === 'mine'), 10_000)).toBe(true);
    expect(heard.map((m) => m.payload)).not.toContain('forged');
    await again.endAsync();
  }, 30_000);

  it('an unbound device is refused at its next connect', async () => {
    const device = await newDevice();
    await (await connect(cluster.nodes[0]!.url, device)).endAsync();
    const unbind = await platform.inject({ method: 'DELETE', url: `/api/platform/application/${sandbox.applicationId}/lock/${device.lockId}/device`, headers: bearer(sandbox.owner.token) });
    expect(unbind.statusCode).toBe(204);
    await expect(connect(cluster.nodes[0]!.url, device)).rejects.toThrow(/bad username or password/i);
    await expect(connect(cluster.nodes[1]!.url, device)).rejects.toThrow(/bad username or password/i);
  }, 30_000);

  it('a certificate the device renewed from is refused at connect once its grace is over; the new one connects', async () => {
    const device = await newDevice();
    // Renewal is for a certificate near its end: one issued within the last minute is not renewed again.
    await t.database.db.update(lockDevices).set({ certificateNotAfter: new Date(Date.now() + 20 * 86_400_000) }).where(eq(lockDevices.id, device.deviceId));
    const client = await connect(cluster.nodes[0]!.url, device);
    const answer = new Promise<string>((resolve) => client.on('message', (_topic, payload) => resolve(payload.toString())));
    await client.subscribeAsync(deviceTopic(device.deviceId, 'certificate'), { qos: 1 });
    const key = await generateDeviceKey();
    await client.publishAsync(deviceTopic(device.deviceId, 'renew'), await createCsr(key, `CN=${device.deviceId}`), { qos: 1 });
    const renewed = { ...device, certificate: (JSON.parse(await answer) as { certificate: string }).certificate, key };
    await client.endAsync();
    // During the grace the old certificate still connects, as with the embedded broker.
    await (await connect(cluster.nodes[0]!.url, device)).endAsync();
    await t.database.db.update(revokedDeviceCertificates).set({ revokedAt: sql`now() - interval '1 second'` }).where(eq(revokedDeviceCertificates.deviceId, device.deviceId));
    await expect(connect(cluster.nodes[0]!.url, device)).rejects.toThrow(/bad username or password/i);
    await expect(connect(cluster.nodes[1]!.url, device)).rejects.toThrow(/bad username or password/i);
    await (await connect(cluster.nodes[0]!.url, renewed)).endAsync();
  }, 30_000);

  it('a device on node 1 is unlocked by a service instance on node 2; after node 1 dies it reconnects to node 2 and the next unlock goes through', async () => {
    const device = await newDevice();
    const { agent, configured } = await runAgent(device);
    try {
      expect(await eventually(async () => (await connected(device.deviceId)) && configured(), 20_000)).toBe(true);
      const first = await unlock(device.lockId);
      expect(first.statusCode, first.body).toBe(204);

      await cluster.nodes[0]!.kill();
      // The platform keeps a device whose node died marked online (its Last Will died with the node) until it is back.
      expect(await eventually(async () => (await unlock(device.lockId)).statusCode === 204, 30_000)).toBe(true);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
