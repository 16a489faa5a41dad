import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopic, type DeviceCreated, type DeviceStatus, type ProvisioningResponse } from '@latchkey/contract';
import { eventually } from '../helpers.js';
import { closed, connectMqtt, createCsr, deviceTls, generateDeviceKey, type DeviceKey } from '../fixtures/devices.js';
import { signOperation, type KeyHolder } from '../fixtures/operations.js';
import { bearer, signUserToken, type SigningKey } from '../fixtures/platform-users.js';
import { startService, waitReady, type ServiceProcess } from './processes.js';

/**
 * Two service processes with the embedded broker on one PostgreSQL database (DATABASE_URL alone, no
 * MQTT_URL): a device connected to A's broker is reached through B — its presence, an unlock, a config
 * after a share change, an unbind — because the instances' brokers are joined through the database
 * (plugins/mqtt/bridge.ts). Needs the built service (npm run build) and TEST_DATABASE_URL.
 */
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AUDIENCE = 'https://latchkey.scale.test';
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

let dbName: string;
let directUrl: string;
let a: ServiceProcess;
let b: ServiceProcess;
const tmpDirs: string[] = [];

let ownerToken: string;
let applicationId: string;
let lockId: string;
let issuer: string;
let signingKey: SigningKey;
let alice: KeyHolder;
let deviceId: string;
let provisioned: ProvisioningResponse;
let deviceKey: DeviceKey;

/** The test's device on A's broker: what it was sent, and whether it answers operations. */
let device: MqttClient;
const operations: { requestId: string; jws: string }[] = [];
const configs: string[] = [];

async function call(base: string, method: string, p: string, options: { body?: unknown; token?: string; contentType?: string } = {}) {
  const { body, token, contentType } = options;
  const res = await fetch(`${base}/api${p}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': contentType ?? 'application/json' } : {}), ...(token ? bearer(token) : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** An application user with a key certified by the platform (as the JS SDK does it). */
async function certifiedUser(base: string, sub: string): Promise<KeyHolder> {
  const token = await signUserToken(signingKey, { iss: issuer, sub, email: `${sub}@example.com`, name: sub, aud: AUDIENCE });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const res = await call(base, 'POST', '/auth/certificate', { token, body: { ephemeralKey: raw.toString('base64') } });
  if (res.status !== 200) throw new Error(`certificate: ${res.status} ${JSON.stringify(res.body)}`);
  return { token, userId: res.body.userId, chain: res.body.certificateChain, privateKey, publicKey };
}

const devicePath = () => `/platform/application/${applicationId}/lock/${lockId}/device`;
const statusOn = async (base: string) => (await call(base, 'GET', devicePath(), { token: ownerToken })).body as DeviceStatus;
const usersOf = (jws: string) => (JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()) as { users: { userId: string }[] }).users.map((u) => u.userId);

beforeAll(async () => {
  dbName = `latchkey_devices_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  directUrl = url.toString();
  const env = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-devices-'));
    tmpDirs.push(dir);
    return {
      DATABASE_URL: directUrl,
      DATA_DIR: dir,
      PLATFORM_AUDIENCE: AUDIENCE,
      DEVICE_TIMEOUT_SECONDS: '5',
      RATE_LIMIT_MAX: '100000',
      ANONYMOUS_RATE_LIMIT_MAX: '100000',
      CERTIFICATE_RATE_LIMIT_MAX: '100000',
      LOGIN_RATE_LIMIT_MAX: '100000',
    };
  };
  // One after the other: the first migrates the empty database.
  a = await startService(env());
  await waitReady(a.url);
  b = await startService(env());
  await waitReady(b.url);

  // The owner, the application and its backend's key, the lock, and Alice sharing it: all through A.
  const email = `devices.${randomUUID().slice(0, 8)}@example.com`;
  expect((await call(a.url, 'POST', '/auth/register', { body: { email, password: 'correct-horse', displayName: 'Owner' } })).status).toBe(200);
  ownerToken = (await call(a.url, 'POST', '/auth/token', { body: { email, password: 'correct-horse' } })).body.authToken;
  const created = await call(a.url, 'POST', '/platform/application', { token: ownerToken, body: { name: 'Doors', companyName: 'Co', mailingAddress: '1 Road' } });
  expect(created.status).toBe(201);
  applicationId = created.headers.get('location')!.split('/').pop()!;
  issuer = `https://id.${randomUUID().slice(0, 8)}.example`;
  expect((await call(a.url, 'POST', `/platform/application/${applicationId}/auth/issuer`, { token: ownerToken, body: { url: issuer } })).status).toBe(204);
  const pair = await generateKeyPair('ES256', { extractable: true });
  const kid = `es256-${randomUUID().slice(0, 8)}`;
  signingKey = { kid, alg: 'ES256', privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' } as SigningKey['publicJwk'] };
  expect((await call(a.url, 'POST', `/platform/application/${applicationId}/auth/key`, { token: ownerToken, body: signingKey.publicJwk })).status).toBe(204);
  const lock = await call(a.url, 'POST', `/platform/application/${applicationId}/lock`, { token: ownerToken, body: { name: 'Front Door' } });
  expect(lock.status).toBe(201);
  lockId = lock.body.id;
  alice = await certifiedUser(a.url, 'alice');
  expect((await call(a.url, 'POST', `/platform/application/${applicationId}/lock/${lockId}/user`, { token: ownerToken, body: { userId: alice.userId } })).status).toBe(201);

  // The device, provisioned through A: it is told A's broker.
  const device = await call(a.url, 'POST', devicePath(), { token: ownerToken });
  expect(device.status).toBe(201);
  deviceId = (device.body as DeviceCreated).deviceId;
  deviceKey = await generateDeviceKey('p256');
  const answer = await call(a.url, 'POST', '/device-provisioning', { body: { code: device.body.provisioningCode, csr: await createCsr(deviceKey, `CN=${deviceId}`) } });
  expect(answer.status).toBe(200);
  provisioned = answer.body as ProvisioningResponse;
}, 120_000);

afterAll(async () => {
  device?.end(true);
  for (const p of [a, b]) if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
  await Promise.all([a?.exited, b?.exited]);
  if (dbName) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a device on instance A, reached through instance B (embedded brokers, one PostgreSQL)', () => {
  it('connects with mutual TLS to the broker its provisioning named (A’s); its presence shows connected in B’s answer', async () => {
    const port = Number(new URL(provisioned.mqttUrl).port);
    expect(port).toBeGreaterThan(0);
    const prefix = provisioned.topicPrefix;
    device = await connectMqtt(port, {
      ...deviceTls({ ...provisioned, key: deviceKey }),
      clientId: deviceId,
      will: { topic: `${prefix}/presence`, payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    device.on('message', (topic, payload) => {
      if (topic === `${prefix}/config`) configs.push(payload.toString());
      if (topic !== `${prefix}/op`) return;
      const op = JSON.parse(payload.toString()) as { requestId: string; jws: string };
      operations.push(op);
      device.publish(`${prefix}/result`, JSON.stringify({ requestId: op.requestId, outcome: 'DONE', state: { locked: false } }), { qos: 1 });
    });
    await device.subscribeAsync([`${prefix}/op`, `${prefix}/config`], { qos: 1 });
    await device.publishAsync(`${prefix}/presence`, 'online', { qos: 1, retain: true });

    expect(await eventually(async () => (await statusOn(b.url)).connected === true, 5000)).toBe(true);
    expect(await statusOn(a.url)).toMatchObject({ deviceId, connected: true });
    // Its first config, signed for it, whichever instance published it.
    expect(await eventually(() => configs.some((jws) => usersOf(jws).includes(alice.userId)), 5000)).toBe(true);
  });

  it('an unlock sent to B reaches the device on A as {requestId, jws}; its DONE comes back to B → 204', async () => {
    const jws = signOperation(alice, lockId, UNLOCK);
    const res = await call(b.url, 'POST', `/device/${lockId}/execute`, { token: alice.token, body: jws, contentType: 'application/jwt' });
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(operations.at(-1)).toEqual({ requestId: expect.any(String), jws });
    expect(await eventually(async () => (await statusOn(b.url)).locked === false, 3000)).toBe(true);
  });

  it('an operation too large for a NOTIFY goes through the table, and still reaches the device', async () => {
    // An extra header parameter, which the platform and devices ignore: the message is ~19 KB in a notice.
    const jws = signOperation(alice, lockId, UNLOCK, { header: { alg: 'EdDSA', typ: 'JWT', x5c: alice.chain, pad: 'x'.repeat(8000) } });
    const res = await call(b.url, 'POST', `/device/${lockId}/execute`, { token: alice.token, body: jws, contentType: 'application/jwt' });
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(operations.at(-1)!.jws).toBe(jws);
    const c = new pg.Client({ connectionString: directUrl });
    await c.connect();
    const { rows } = await c.query<{ topic: string }>('select topic from mqtt_bridge_messages');
    await c.end();
    expect(rows.map((r) => r.topic)).toContain(deviceTopic(deviceId, 'op'));
  });

  it('a share added through B: the config re-published for it reaches the device on A', async () => {
    const bob = await certifiedUser(b.url, 'bob');
    const shared = await call(b.url, 'POST', `/platform/application/${applicationId}/lock/${lockId}/user`, { token: ownerToken, body: { userId: bob.userId } });
    expect(shared.status).toBe(201);
    expect(await eventually(() => configs.some((jws) => usersOf(jws).includes(bob.userId)), 5000)).toBe(true);
  });

  it('an unbind sent to B cuts the device’s connection on A at once; A refuses its certificate from then on', async () => {
    const gone = closed(device);
    const started = Date.now();
    expect((await call(b.url, 'DELETE', devicePath(), { token: ownerToken })).status).toBe(204);
    await gone;
    expect(Date.now() - started).toBeLessThan(1000);
    // The certificate is refused by A's broker when presented again.
    await expect(connectMqtt(Number(new URL(provisioned.mqttUrl).port), { ...deviceTls({ ...provisioned, key: deviceKey }), clientId: deviceId })).rejects.toThrow();
    for (const p of [a, b]) expect(p.logs.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
  });
});
