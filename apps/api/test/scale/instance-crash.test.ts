import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceErrors, deviceTopic, type DeviceCreated, type DeviceStatus, type ProvisioningResponse } from '@latchkey/contract';
import { eventually } from '../helpers.js';
import { scratchPostgres } from '../fixtures/scratch-database.js';
import { connectMqtt, createCsr, deviceTls, generateDeviceKey } from '../fixtures/devices.js';
import { signOperation, type KeyHolder } from '../fixtures/operations.js';
import { bearer, signUserToken, type SigningKey } from '../fixtures/platform-users.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { startService, waitReady, type ServiceProcess } from './processes.js';

/**
 * Two service processes with the embedded broker on one PostgreSQL database; a device connected to A's
 * broker. A is killed with SIGKILL (no Last Will: the broker that held it is gone) as soon as the device is
 * shown online, whether or not A has written yet that its broker holds it: B sees A silent, or the device
 * left unclaimed, records the device offline and sends device.offline (within 15 s of the kill: measured by
 * the bench), and an unlock through B answers 503 at once. Needs the built service (npm run build) and
 * TEST_DATABASE_URL.
 */
const AUDIENCE = 'https://latchkey.scale.test';
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
/**
 * How long the test waits from the crash for the device shown offline and its webhook: long enough for a
 * loaded host, short enough to catch a sweep that never comes. The 15 s bound itself is a budget, measured
 * by bench/instance-crash.ts.
 */
const CRASH_WAIT_MS = 40_000;

let scratch: Awaited<ReturnType<typeof scratchPostgres>> | undefined;
let a: ServiceProcess;
let b: ServiceProcess;
const tmpDirs: string[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let device: MqttClient | undefined;

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

beforeAll(async () => {
  receiver = await startReceiver();
  scratch = await scratchPostgres('latchkey_crash');
  const url = new URL(scratch.url);
  const env = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-crash-'));
    tmpDirs.push(dir);
    return {
      DATABASE_URL: url.toString(),
      DATA_DIR: dir,
      PLATFORM_AUDIENCE: AUDIENCE,
      DEVICE_TIMEOUT_SECONDS: '10',
      OUTBOUND_ALLOW: '127.0.0.1',
      RATE_LIMIT_MAX: '100000',
      ANONYMOUS_RATE_LIMIT_MAX: '100000',
      CERTIFICATE_RATE_LIMIT_MAX: '100000',
      LOGIN_RATE_LIMIT_MAX: '100000',
    };
  };
  a = await startService(env());
  await waitReady(a.url);
  b = await startService(env());
  await waitReady(b.url);
}, 120_000);

afterAll(async () => {
  device?.end(true);
  for (const p of [a, b]) if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all([a?.exited, b?.exited]);
  await receiver?.close();
  await scratch?.drop();
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('an instance killed with its devices connected to its embedded broker', () => {
  it('its device is recorded offline by a peer with a device.offline webhook, and an unlock through the peer answers 503', async () => {
    // The owner, the application, a lock shared with Alice, a webhook for device.offline.
    const email = `crash.${randomUUID().slice(0, 8)}@example.com`;
    expect((await call(a.url, 'POST', '/auth/register', { body: { email, password: 'correct-horse', displayName: 'Owner' } })).status).toBe(200);
    const ownerToken = (await call(a.url, 'POST', '/auth/token', { body: { email, password: 'correct-horse' } })).body.authToken as string;
    const created = await call(a.url, 'POST', '/platform/application', { token: ownerToken, body: { name: 'Doors', companyName: 'Co', mailingAddress: '1 Road' } });
    const applicationId = created.headers.get('location')!.split('/').pop()!;
    const issuer = `https://id.${randomUUID().slice(0, 8)}.example`;
    expect((await call(a.url, 'POST', `/platform/application/${applicationId}/auth/issuer`, { token: ownerToken, body: { url: issuer } })).status).toBe(204);
    const pair = await generateKeyPair('ES256', { extractable: true });
    const kid = `es256-${randomUUID().slice(0, 8)}`;
    const signingKey: SigningKey = { kid, alg: 'ES256', privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' } as SigningKey['publicJwk'] };
    expect((await call(a.url, 'POST', `/platform/application/${applicationId}/auth/key`, { token: ownerToken, body: signingKey.publicJwk })).status).toBe(204);
    const lockId = (await call(a.url, 'POST', `/platform/application/${applicationId}/lock`, { token: ownerToken, body: { name: 'Front Door' } })).body.id as string;
    const token = await signUserToken(signingKey, { iss: issuer, sub: 'alice', email: 'alice@example.com', name: 'alice', aud: AUDIENCE });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const cert = await call(b.url, 'POST', '/auth/certificate', { token, body: { ephemeralKey: publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64') } });
    expect(cert.status).toBe(200);
    const alice: KeyHolder = { token, userId: cert.body.userId, chain: cert.body.certificateChain, privateKey, publicKey };
    expect((await call(a.url, 'POST', `/platform/application/${applicationId}/lock/${lockId}/user`, { token: ownerToken, body: { userId: alice.userId } })).status).toBe(201);
    const hook = await call(a.url, 'POST', `/platform/application/${applicationId}/webhook`, { token: ownerToken, body: { url: receiver.url, events: ['device.offline'] } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    // The device, provisioned through A and connected to A's broker.
    const devicePath = `/platform/application/${applicationId}/lock/${lockId}/device`;
    const made = (await call(a.url, 'POST', devicePath, { token: ownerToken })).body as DeviceCreated;
    const key = await generateDeviceKey('p256');
    const provisioned = (await call(a.url, 'POST', '/device-provisioning', { body: { code: made.provisioningCode, csr: await createCsr(key, `CN=${made.deviceId}`) } })).body as ProvisioningResponse;
    const mqttPort = Number(new URL(provisioned.mqttUrl).port);
    device = await connectMqtt(mqttPort, {
      ...deviceTls({ ...provisioned, key }),
      clientId: made.deviceId,
      will: { topic: deviceTopic(made.deviceId, 'presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    device.on('error', () => undefined);
    await device.publishAsync(deviceTopic(made.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    const statusOnB = async () => (await call(b.url, 'GET', devicePath, { token: ownerToken })).body as DeviceStatus;
    // The kill comes as soon as the device is shown online: A may not have written yet that its broker holds it.
    expect(await eventually(async () => (await statusOnB()).connected === true, 10_000)).toBe(true);

    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await a.exited;
    const offlineHook = () => receiver.received.find((r) => (JSON.parse(r.body) as { type: string; data: { lockId: string } }).type === 'device.offline');
    expect(await eventually(async () => (await statusOnB()).connected === false, CRASH_WAIT_MS - (Date.now() - killedAt))).toBe(true);
    expect(await eventually(() => offlineHook() !== undefined, CRASH_WAIT_MS - (Date.now() - killedAt))).toBe(true);
    expect(JSON.parse(offlineHook()!.body)).toMatchObject({ type: 'device.offline', data: { lockId, deviceId: made.deviceId } });

    const unlock = await call(b.url, 'POST', `/device/${lockId}/execute`, { token: alice.token, body: signOperation(alice, lockId, UNLOCK), contentType: 'application/jwt' });
    expect(unlock.status, JSON.stringify(unlock.body)).toBe(503);
    expect(unlock.body).toMatchObject({ message: deviceErrors.offline });
  }, 90_000);
});
