// The door without the cloud, as the platform keeps it (one service in this process, as the API tests build
// it: PGlite; PostgreSQL with TEST_DB_KIND=postgres and TEST_DATABASE_URL):
// 1. Re-signing configs: every connected device is issued its config again before it lapses
//    (apps/api/src/modules/devices/runtime/config-reissue.ts). OFFLINE_GRACE_CONFIGS (default 10,000)
//    locks with a device each, re-issued in the reissuer's paced batches (REISSUES_PER_TICK at a time)
//    through the real ConfigPublisher: read the lock's config from the database, bump its version, sign it
//    (EdDSA, the platform CA), publish it retained on the embedded broker. Reports the total, ms per config,
//    CPU ms per config, and the signature alone.
// 2. Revocation at a connected door: the device package's DeviceAgent over mutual TLS to the embedded broker,
//    a user shared the lock; the owner removes the share (DELETE …/lock/{lockId}/user/{userId}), and from
//    the API's 204 the user's fresh signed unlock is handed to the door's local endpoint until the door
//    refuses it. p99 over OFFLINE_GRACE_SAMPLES (default 50) revocations; budget ≤ 1 s.
// Run alone: `node --import tsx bench/offline-grace.ts`; from run.mjs: BENCH_PARTS=offline. Prints
// `ROW {json}` lines for run.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning, type Logger } from '@latchkey/device';
import { createTestApp } from '../apps/api/test/helpers.ts';
import { provisionDevice } from '../apps/api/test/fixtures/devices.ts';
import { bearer } from '../apps/api/test/fixtures/platform-users.ts';
import { appUserToken, certify, createLock, createSandbox, share, signOperation } from '../apps/api/test/fixtures/operations.ts';
import { REISSUES_PER_TICK } from '../apps/api/src/modules/devices/runtime/config-reissue.ts';
import { percentile } from './lib.mjs';

const CONFIGS = Number(process.env.OFFLINE_GRACE_CONFIGS ?? 10_000);
const SAMPLES = Number(process.env.OFFLINE_GRACE_SAMPLES ?? 50);
const REVOCATION_P99_BUDGET_MS = 1000;
const quiet: Logger = { info: () => undefined, warn: () => undefined };
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

const stateDirs: string[] = [];
const rows: [string, string, string, string?, string?][] = [];
const row = (metric: string, value: string, budget?: string, verdict?: string) => {
  rows.push(['offline grace', metric, value, budget, verdict]);
  console.log(`ROW ${JSON.stringify(['offline grace', metric, value, budget ?? '', verdict ?? ''])}`);
};

const env: Record<string, string> = { MQTT_PORT: '0', RATE_LIMIT_MAX: '100000000', ANONYMOUS_RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000000', CERTIFICATE_RATE_LIMIT_MAX: '100000000' };
const t = await createTestApp(env);
const port = (await t.app.mqtt.listen())!;
const sandbox = await createSandbox(t);
const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

// ─── 1. Re-signing configs ─────────────────────────────────────────────────────────────────────────────
{
  const users = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await certify(t, await appUserToken(sandbox, `resign-${i}`))).userId));
  const lockIds = rowsOf<{ id: string }>(
    await t.database.db.execute(sql`insert into locks (application_id, name) select ${sandbox.applicationId}::uuid, 'Bench ' || g from generate_series(1, ${CONFIGS}) g returning id`),
  ).map((r) => r.id);
  // Each lock: a provisioned, connected device, and five users sharing it (a config of a small office door).
  await t.database.db.execute(sql`
    insert into lock_devices (lock_id, provisioned_at, connected) select id, now(), true from locks where id in (select jsonb_array_elements_text(${JSON.stringify(lockIds)}::jsonb)::uuid)`);
  await t.database.db.execute(sql`
    insert into lock_shares (lock_id, user_id) select l.id, u.id from locks l cross join application_users u
    where l.id in (select jsonb_array_elements_text(${JSON.stringify(lockIds)}::jsonb)::uuid) and u.id in (select jsonb_array_elements_text(${JSON.stringify(users)}::jsonb)::uuid)`);
  const configs = t.app.deviceRuntime.configs;
  await t.app.deviceRuntime.settled();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < lockIds.length; i += REISSUES_PER_TICK) {
    for (const lockId of lockIds.slice(i, i + REISSUES_PER_TICK)) configs.reissue(lockId);
    await configs.idle();
  }
  const totalMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  const { n } = rowsOf<{ n: number }>(await t.database.db.execute(sql`select count(*)::int as n from lock_devices where config_version > 0 and lock_id in (select jsonb_array_elements_text(${JSON.stringify(lockIds)}::jsonb)::uuid)`))[0]!;
  if (n !== lockIds.length) throw new Error(`re-issued ${n} of ${lockIds.length} configs`);
  row(`re-sign ${CONFIGS.toLocaleString('en')} configs (read, version, sign, publish), total`, `${(totalMs / 1000).toFixed(1)} s`);
  row('re-sign one config, wall / CPU', `${(totalMs / CONFIGS).toFixed(2)} ms / ${((cpu.user + cpu.system) / 1000 / CONFIGS).toFixed(2)} ms`);
  const sample = { lockId: lockIds[0], version: 1, unlockTime: 5, usageRequirements: {}, users: users.map((userId) => ({ userId, publicKey: '', role: 'USER', start: null, end: null, timeWindow: null })), offlineGraceSeconds: 604_800, issuedAt: Math.floor(Date.now() / 1000) };
  const signStart = performance.now();
  for (let i = 0; i < CONFIGS; i++) await t.app.platformCa.signJws({ ...sample, version: i + 1 });
  row('sign one config (EdDSA) alone', `${((performance.now() - signStart) / CONFIGS).toFixed(3)} ms`);
  await t.database.db.execute(sql`delete from locks where id in (select jsonb_array_elements_text(${JSON.stringify(lockIds)}::jsonb)::uuid)`);
}

// ─── 2. Revocation at a connected door ─────────────────────────────────────────────────────────────────
{
  const lockId = await createLock(t, sandbox.applicationId, { unlockTime: 1 });
  const alice = await certify(t, await appUserToken(sandbox, 'revoked'));
  await share(t, lockId, alice.userId);
  const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-offline-bench-'));
  const state = new StateDir(dir);
  await saveProvisioning(state, { ...device, mqttUrl: `mqtts://127.0.0.1:${port}` }, device.key.privateKeyPem, 'http://127.0.0.1');
  const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'bench', httpPort: 0, httpHost: '127.0.0.1', log: quiet, localRefusalLimit: { max: 1_000_000, windowMs: 60_000 } });
  const holds = () => agent.controller.config?.users.some((u) => u.userId === alice.userId) ?? false;
  const until = async (check: () => boolean | Promise<boolean>) => {
    const end = Date.now() + 30_000;
    while (!(await check())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  const local = async () =>
    (await fetch(`http://127.0.0.1:${agent.httpPort}/execute`, { method: 'POST', headers: { 'content-type': 'application/jwt' }, body: signOperation(alice, lockId, UNLOCK) })).status;
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    await share(t, lockId, alice.userId);
    await until(holds);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/user/${alice.userId}`, headers: bearer(sandbox.owner.token) });
    if (res.statusCode !== 204) throw new Error(`revoke: ${res.statusCode} ${res.body}`);
    const answered = performance.now();
    while ((await local()) !== 403) {
      // The user's next operation, again, until the door refuses it.
    }
    latencies.push(performance.now() - answered);
  }
  await agent.stop();
  // Removed once the service is closed: the agent may still be writing the last config it took.
  stateDirs.push(dir);
  latencies.sort((x, y) => x - y);
  const p99 = percentile(latencies, 99);
  row(`revocation: API 204 → the connected door refuses the user, p50 / p99 (${SAMPLES} revocations)`, `${percentile(latencies, 50).toFixed(1)} ms / ${p99.toFixed(1)} ms`, `p99 ≤ ${REVOCATION_P99_BUDGET_MS} ms`, p99 <= REVOCATION_P99_BUDGET_MS ? 'met' : 'NOT met');
}

await t.close();
for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
for (const [section, metric, value, budget, verdict] of rows) console.log(`| ${section} | ${metric} | ${value} | ${budget ?? ''} | ${verdict ?? ''} |`);
