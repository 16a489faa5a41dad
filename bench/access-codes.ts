// Access codes and door events, measured in one process (one service as the API tests build it: PGlite;
// PostgreSQL with TEST_DB_KIND=postgres and TEST_DATABASE_URL):
// 1. The keypad's check on a device: LockController.enterCode with a VirtualActuator and a config holding
//    ACCESS_CODES_ONLINE (default 1,000) online codes, plus the lock's offline-code secret. Every code is
//    checked (the bench's keypad never locks out): an online code that holds (one SHA-256 and a lookup),
//    an offline code that holds (one SHA-256, one HMAC), a wrong 10-digit code (the same work, refused).
//    p50 / p99 per check; budget p99 ≤ 5 ms.
// 2. A code created through the API (POST …/access-code) while a device (the device package's DeviceAgent
//    over mutual TLS to the embedded broker) is connected, until the API lists it as `set` (the device has
//    taken the config that holds it and said so). p50 / p99 over ACCESS_CODES_SAMPLES (default 50); budget
//    p99 ≤ 1 s. Each code starts within the device's report rate (20 reports at once, then 1 a second).
// 3. A code typed at that connected device until the portal's live stream (GET …/lock/events, server-sent
//    events over a real HTTP connection) carries its `activity` entry. p50 / p99; budget p99 ≤ 250 ms.
// Run alone: `node --import tsx bench/access-codes.ts`; from run.mjs: BENCH_PARTS=codes. Prints `ROW {json}`
// lines for run.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { eq } from 'drizzle-orm';
import type { AccessCode, LockLogEntry } from '@latchkey/contract';
import { DeviceAgent, Keypad, LockController, StateDir, VirtualActuator, hashAccessCode, offlineAccessCode, saveProvisioning, type Logger } from '@latchkey/device';
import { createTestCa, testConfig } from '../packages/device/src/test-fixture.ts';
import { createTestApp } from '../apps/api/test/helpers.ts';
import { lockDevices } from '../apps/api/src/db/schema.ts';
import { provisionDevice } from '../apps/api/test/fixtures/devices.ts';
import { bearer } from '../apps/api/test/fixtures/platform-users.ts';
import { createLock, createSandbox } from '../apps/api/test/fixtures/operations.ts';
import { percentile } from './lib.mjs';

const ONLINE = Number(process.env.ACCESS_CODES_ONLINE ?? 1000);
const CHECKS = Number(process.env.ACCESS_CODES_CHECKS ?? 2000);
const SAMPLES = Number(process.env.ACCESS_CODES_SAMPLES ?? 50);
const quiet: Logger = { info: () => undefined, warn: () => undefined };
const H = 3600;

const rows: [string, string, string, string?, string?][] = [];
const row = (metric: string, value: string, budget?: string, verdict?: string) => {
  rows.push(['codes', metric, value, budget, verdict]);
  console.log(`ROW ${JSON.stringify(['codes', metric, value, budget ?? '', verdict ?? ''])}`);
};
const figures = (xs: number[], digits = 1) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50) as number, p99: percentile(sorted, 99) as number, text: `${percentile(sorted, 50).toFixed(digits)} ms / ${percentile(sorted, 99).toFixed(digits)} ms` };
};
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

// ─── 1. The keypad's check ─────────────────────────────────────────────────────────────────────────────
{
  const lockId = randomUUID();
  const salt = randomBytes(16).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  const online = Array.from({ length: ONLINE }, (_, i) => String(100_000 + i * 7));
  const accessCodes = online.map((code) => ({ accessCodeId: randomUUID(), hash: hashAccessCode(salt, code), start: null, end: null }));
  const ca = await createTestCa();
  // Every code is checked: a keypad that never locks out (its wrong codes forgotten at once).
  const keypad = new Keypad({ maxWrong: Number.MAX_SAFE_INTEGER, maxWrongPerQuiet: Number.MAX_SAFE_INTEGER, windowMs: 1, quietMs: 1 });
  const lock = new LockController({ lockId, platformCa: ca.pem, actuator: new VirtualActuator(), config: testConfig(lockId, [], { unlockTime: 1, accessCodeSalt: salt, accessCodes }), offlineCodeSecret: secret, keypad });
  const hour = Math.floor(Date.now() / 1000 / H) * H;
  const offline = Array.from({ length: 100 }, (_, i) => offlineAccessCode(secret, lockId, hour - (i % 24) * H, hour + (1 + (i % 700)) * H));
  const wrong = (i: number) => String(9_000_000_000 + i * 13);
  const measure = async (code: (i: number) => string, outcome: 'DONE' | 'REFUSED') => {
    for (let i = 0; i < 200; i++) await lock.enterCode(code(i));
    const times: number[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const typed = code(i);
      const start = performance.now();
      const result = await lock.enterCode(typed);
      times.push(performance.now() - start);
      if (result.outcome !== outcome) throw new Error(`${typed}: ${result.outcome} ${result.reason ?? ''}`);
    }
    return figures(times, 3);
  };
  const cases = [
    [`an online code that holds (${ONLINE.toLocaleString('en')} in the config)`, await measure((i) => online[(i * 37) % ONLINE]!, 'DONE')],
    ['an offline code that holds', await measure((i) => offline[i % offline.length]!, 'DONE')],
    ['a wrong 10-digit code', await measure(wrong, 'REFUSED')],
  ] as const;
  for (const [label, f] of cases) row(`keypad check on the device, ${label}: p50 / p99 (${CHECKS.toLocaleString('en')} checks)`, f.text, 'p99 ≤ 5 ms', verdict(f.p99 <= 5));
  await lock.close({ lock: true });
}

// ─── 2 and 3. A connected door ─────────────────────────────────────────────────────────────────────────
const env: Record<string, string> = { MQTT_PORT: '0', RATE_LIMIT_MAX: '100000000', ANONYMOUS_RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000000' };
const t = await createTestApp(env);
const port = (await t.app.mqtt.listen())!;
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
const sandbox = await createSandbox(t);
const lockId = await createLock(t, sandbox.applicationId, { unlockTime: 1 });
const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-codes-bench-'));
const state = new StateDir(dir);
await saveProvisioning(state, { ...device, mqttUrl: `mqtts://127.0.0.1:${port}` }, device.key.privateKeyPem, 'http://127.0.0.1');
const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'bench', log: quiet });
const base = `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/access-code`;
const headers = bearer(sandbox.owner.token);
const until = async (check: () => boolean | Promise<boolean>, what: string) => {
  const end = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};
const listed = async () => {
  const res = await t.app.inject({ method: 'GET', url: base, headers });
  if (res.statusCode !== 200) throw new Error(`list: ${res.statusCode} ${res.body}`);
  return res.json() as AccessCode[];
};
const create = async (name: string) => {
  const res = await t.app.inject({ method: 'POST', url: base, headers, payload: { name } });
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return res.json() as AccessCode;
};
await until(() => agent.controller.config !== null, 'the device’s first config');

// ─── 2. Created → set ──────────────────────────────────────────────────────────────────────────────────
{
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // The platform records one device's reports 20 at once, then 1 a second (a flood guard): each code
    // starts when the door's report of taking it would be recorded at once, as for codes made at a
    // person's pace. Back to back, past the burst, `set` follows that rate instead.
    await until(() => t.app.deviceRuntime.reportLimiter.waitMs(device.deviceId) === 0, 'the device’s report rate');
    const start = performance.now();
    const code = await create(`Bench ${i}`);
    await until(async () => (await listed()).find((c) => c.accessCodeId === code.accessCodeId)?.status === 'set', 'status set');
    latencies.push(performance.now() - start);
    const removed = await t.app.inject({ method: 'DELETE', url: `${base}/${code.accessCodeId}`, headers });
    if (removed.statusCode !== 204) throw new Error(`delete: ${removed.statusCode} ${removed.body}`);
    // The next code starts from a quiet door: the withdrawal's config has reached it, and its report the platform.
    await until(() => !(agent.controller.config?.accessCodes ?? []).some((c) => c.accessCodeId === code.accessCodeId), 'the withdrawal at the door');
    const version = agent.controller.config!.version;
    await until(async () => {
      const [row] = await t.database.db.select({ acked: lockDevices.configAckedVersion }).from(lockDevices).where(eq(lockDevices.lockId, lockId));
      return (row?.acked ?? 0) >= version;
    }, 'the withdrawal’s report');
  }
  const f = figures(latencies);
  row(`a code created through the API until listed \`set\` (a connected device has it), within the device's report rate: p50 / p99 (${SAMPLES} codes)`, f.text, 'p99 ≤ 1 s', verdict(f.p99 <= 1000));
}

// ─── 3. Typed at the door → the portal's live stream ──────────────────────────────────────────────────
{
  const code = await create('Live');
  await until(async () => (await listed()).find((c) => c.accessCodeId === code.accessCodeId)?.status === 'set', 'status set');
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/platform/application/${sandbox.applicationId}/lock/events`, { headers, signal: controller.signal });
  const body = res.body;
  if (!res.ok || !body) throw new Error(`events: ${res.status}`);
  const arrivals: number[] = [];
  let connected = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        const now = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.startsWith(': connected')) connected = true;
          const lines = block.split('\n');
          if (!lines.includes('event: activity')) continue;
          const entry = JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6)) as LockLogEntry;
          if (entry.lockId === lockId && entry.accessCodeId === code.accessCodeId && entry.source === 'device') arrivals.push(now);
        }
      }
    } catch {
      // aborted at the end
    }
  })();
  await until(() => connected, 'the live stream');
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now();
    const result = await agent.enterCode(code.code);
    if (result.outcome !== 'DONE') throw new Error(`typed: ${result.outcome} ${result.reason ?? ''}`);
    await until(() => arrivals.length > i, 'the activity on the live stream');
    latencies.push(arrivals[i]! - start);
  }
  controller.abort();
  await reading;
  const f = figures(latencies);
  row(`a code typed at a connected device until its entry is on the portal's live stream: p50 / p99 (${SAMPLES} codes)`, f.text, 'p99 ≤ 250 ms', verdict(f.p99 <= 250));
}

await agent.stop();
await t.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
for (const [section, metric, value, budget, verdict] of rows) console.log(`| ${section} | ${metric} | ${value} | ${budget ?? ''} | ${verdict ?? ''} |`);
