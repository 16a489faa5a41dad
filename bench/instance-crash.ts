// A crashed instance's devices shown offline (b of "the door without the cloud"): two built service processes
// with the embedded broker on one PostgreSQL database (TEST_DATABASE_URL or BENCH_DATABASE_URL, where a
// scratch database may be created), CRASH_DEVICES (default 10) devices connected to A's broker over mutual
// TLS. A is killed with SIGKILL (no Last Will: the broker holding them is gone); from the kill until the
// database records each device offline (as B decides, polled every 50 ms). CRASH_ROUNDS (default 3) kills,
// A started again and the devices reconnected between them; p50 / p99 over every device of every round.
// Budget: p99 ≤ 15 s. Needs the build (npm run build). Run alone: `node --import tsx bench/instance-crash.ts`;
// from run.mjs: BENCH_PARTS=door (with a PostgreSQL URL). Prints `ROW {json}` lines for run.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { deviceTopic, type DeviceCreated, type ProvisioningResponse } from '@latchkey/contract';
import { connectMqtt, createCsr, deviceTls, generateDeviceKey, type DeviceKey } from '../apps/api/test/fixtures/devices.ts';
import { freePort, startService, waitReady, type ServiceProcess } from '../apps/api/test/scale/processes.ts';
import { percentile } from './lib.mjs';

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const DEVICES = Number(process.env.CRASH_DEVICES ?? 10);
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);
const BUDGET_MS = 15_000;
const row = (metric: string, value: string, budget = '', verdict = '') => console.log(`ROW ${JSON.stringify(['door without the cloud', metric, value, budget, verdict])}`);
if (!adminUrl) {
  row('crashed instance → its devices offline', 'skipped: needs TEST_DATABASE_URL (PostgreSQL)');
  process.exit(0);
}

const dbName = `latchkey_crash_bench_${randomUUID().replace(/-/g, '')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
const tmpDirs: string[] = [];
const env = (extra: Record<string, string> = {}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-crash-bench-'));
  tmpDirs.push(dir);
  return { DATABASE_URL: url.toString(), DATA_DIR: dir, RATE_LIMIT_MAX: '100000', ANONYMOUS_RATE_LIMIT_MAX: '100000', LOGIN_RATE_LIMIT_MAX: '100000', PROVISIONING_RATE_LIMIT_MAX: '100000', ...extra };
};
const db = new pg.Client({ connectionString: url.toString() });
let a: ServiceProcess | undefined;
let b: ServiceProcess | undefined;
let clients: MqttClient[] = [];

async function call(base: string, method: string, p: string, options: { body?: unknown; token?: string } = {}) {
  const res = await fetch(`${base}/api${p}`, {
    method,
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return { headers: res.headers, body: text ? JSON.parse(text) : null };
}

// A's broker on one port across its restarts, so the devices find it again where they were told.
const aMqtt = { MQTT_PORT: String(await freePort()) };
try {
  a = await startService(env(aMqtt));
  await waitReady(a.url);
  b = await startService(env());
  await waitReady(b.url);
  await db.connect();
  const email = `crash.bench.${randomUUID().slice(0, 8)}@example.com`;
  await call(a.url, 'POST', '/auth/register', { body: { email, password: 'correct-horse', displayName: 'Owner' } });
  const token = (await call(a.url, 'POST', '/auth/token', { body: { email, password: 'correct-horse' } })).body.authToken as string;
  const created = await call(a.url, 'POST', '/platform/application', { token, body: { name: 'Doors', companyName: 'Co', mailingAddress: '1 Road' } });
  const applicationId = created.headers.get('location')!.split('/').pop()!;
  const devices: { deviceId: string; key: DeviceKey; provisioned: ProvisioningResponse }[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const lockId = (await call(a.url, 'POST', `/platform/application/${applicationId}/lock`, { token, body: { name: `Door ${i + 1}` } })).body.id as string;
    const made = (await call(a.url, 'POST', `/platform/application/${applicationId}/lock/${lockId}/device`, { token })).body as DeviceCreated;
    const key = await generateDeviceKey('p256');
    const provisioned = (await call(a.url, 'POST', '/device-provisioning', { body: { code: made.provisioningCode, csr: await createCsr(key, `CN=${made.deviceId}`) } })).body as ProvisioningResponse;
    devices.push({ deviceId: made.deviceId, key, provisioned });
  }
  const ids = devices.map((d) => d.deviceId);
  const connectedCount = async () => (await db.query<{ n: number }>('select count(*)::int as n from lock_devices where id = any($1) and connected', [ids])).rows[0]!.n;
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) {
      a = await startService(env(aMqtt));
      await waitReady(a.url);
    }
    clients = [];
    for (const d of devices) {
      const client = await connectMqtt(Number(aMqtt.MQTT_PORT), {
        ...deviceTls({ ...d.provisioned, key: d.key }),
        clientId: d.deviceId,
        will: { topic: deviceTopic(d.deviceId, 'presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
      });
      client.on('error', () => undefined);
      await client.publishAsync(deviceTopic(d.deviceId, 'presence'), 'online', { qos: 1, retain: true });
      clients.push(client);
    }
    const ready = Date.now() + 30_000;
    while ((await connectedCount()) < DEVICES) {
      if (Date.now() > ready) throw new Error('the devices were not recorded online');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    const offlineAt = new Map<string, number>();
    const end = killedAt + 60_000;
    while (offlineAt.size < DEVICES && Date.now() < end) {
      const { rows } = await db.query<{ id: string }>('select id from lock_devices where id = any($1) and not connected', [ids]);
      for (const { id } of rows) if (!offlineAt.has(id)) offlineAt.set(id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await a.exited;
    for (const client of clients) client.end(true);
    if (offlineAt.size < DEVICES) throw new Error(`round ${round + 1}: ${DEVICES - offlineAt.size} devices still online 60 s after the kill`);
    samples.push(...[...offlineAt.values()].map((at) => at - killedAt));
  }
  samples.sort((x, y) => x - y);
  const p99 = percentile(samples, 99);
  row(
    `crashed instance (kill -9) → its devices recorded offline by the other instance, p50 / p99 (${DEVICES} devices × ${ROUNDS} kills, PostgreSQL)`,
    `${(percentile(samples, 50) / 1000).toFixed(1)} s / ${(p99 / 1000).toFixed(1)} s (fastest ${(samples[0]! / 1000).toFixed(1)} s)`,
    'p99 ≤ 15 s',
    p99 <= BUDGET_MS ? 'met' : 'NOT met',
  );
} finally {
  for (const client of clients) client.end(true);
  for (const p of [a, b]) if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all([a?.exited, b?.exited]);
  await db.end().catch(() => undefined);
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
}
