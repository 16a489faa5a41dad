// The door without the cloud, end to end (one service in this process, as the API tests build it: PGlite;
// PostgreSQL with TEST_DB_KIND=postgres and TEST_DATABASE_URL):
// a. Events decided offline: the device package's DeviceAgent (mutual TLS to the embedded broker, through a
//    TCP relay the bench cuts) records DOOR_EVENTS_COUNT (default 10,000) door events from its sensor while
//    cut off, each signed and chained in its on-disk event log; then the link is restored. From the device's
//    reconnection until the platform has logged the last one: events/s (budget ≥ 2,000/s), and the lock's
//    activity checked for none lost or doubled (one entry per seq, 1…N, no gap entry).
// c. Revocation to refusal with DOOR_ONLINE_DEVICES (default 1,000) devices online: that many devices, each
//    with its own certificate, connected over TLS from a separate process (bench/device-swarm.mjs), beside
//    one real DeviceAgent whose lock a user shares; the owner removes the share, and from the API's 204 the
//    user's fresh signed unlock is handed to the door's local endpoint until it refuses. p99 over
//    DOOR_REVOCATIONS (default 50); budget ≤ 1 s.
// Run alone: `node --import tsx bench/door-without-cloud.ts`; from run.mjs: BENCH_PARTS=door. DOOR_PARTS=events,revocation
// picks the parts. Prints `ROW {json}` lines for run.mjs.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning, type Logger } from '@latchkey/device';
import { createTestApp } from '../apps/api/test/helpers.ts';
import { provisionDevice } from '../apps/api/test/fixtures/devices.ts';
import { bearer } from '../apps/api/test/fixtures/platform-users.ts';
import { appUserToken, certify, createLock, createSandbox, share, signOperation } from '../apps/api/test/fixtures/operations.ts';
import { percentile } from './lib.mjs';

const EVENTS = Number(process.env.DOOR_EVENTS_COUNT ?? 10_000);
const ONLINE = Number(process.env.DOOR_ONLINE_DEVICES ?? 1_000);
const REVOCATIONS = Number(process.env.DOOR_REVOCATIONS ?? 50);
const DELIVERY_TIMEOUT_S = Number(process.env.DOOR_DELIVERY_TIMEOUT_S ?? 900);
const PARTS = new Set((process.env.DOOR_PARTS ?? 'events,revocation').split(','));
const EVENTS_BUDGET_PER_S = 2_000;
const REVOCATION_P99_BUDGET_MS = 1000;
const quiet: Logger = { info: () => undefined, warn: () => undefined };
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

const rows: [string, string, string, string?, string?][] = [];
const row = (metric: string, value: string, budget?: string, verdict?: string) => {
  rows.push(['door without the cloud', metric, value, budget, verdict]);
  console.log(`ROW ${JSON.stringify(['door without the cloud', metric, value, budget ?? '', verdict ?? ''])}`);
};
const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
/** Waits for `check`, asked every `everyMs` (a database query asked often would compete with what is measured). */
const until = async (check: () => boolean | Promise<boolean>, what: string, ms = 120_000, everyMs = 5) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
};

/** A TCP relay between a device and the broker, cut (connections reset, nothing listening) and restored on the same port. */
class BrokerLink {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly brokerPort: number) {}
  async open(): Promise<void> {
    this.server = createServer((device) => {
      const broker = createConnection(this.brokerPort, '127.0.0.1');
      for (const socket of [device, broker]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      device.pipe(broker).pipe(device);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }
  async cut(): Promise<void> {
    if (!this.server) return;
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const socket of this.sockets) socket.resetAndDestroy();
    await closed;
    this.server = null;
  }
}

const env: Record<string, string> = { MQTT_PORT: '0', RATE_LIMIT_MAX: '100000000', ANONYMOUS_RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000000', CERTIFICATE_RATE_LIMIT_MAX: '100000000', PROVISIONING_RATE_LIMIT_MAX: '100000000' };
const t = await createTestApp(env);
const port = (await t.app.mqtt.listen())!;
const sandbox = await createSandbox(t);
const stateDirs: string[] = [];

async function startAgent(lockId: string, mqttPort: number, extra: Partial<Parameters<typeof DeviceAgent.start>[0]> = {}) {
  const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-door-bench-'));
  stateDirs.push(dir);
  const state = new StateDir(dir);
  await saveProvisioning(state, { ...device, mqttUrl: `mqtts://127.0.0.1:${mqttPort}` }, device.key.privateKeyPem, 'http://127.0.0.1');
  return DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'bench', log: quiet, reconnectMs: 20, maxReconnectMs: 200, ...extra });
}

try {
  // ─── a. Events decided offline, delivered after reconnection ─────────────────────────────────────────
  if (PARTS.has('events')) {
    const lockId = await createLock(t, sandbox.applicationId);
    const link = new BrokerLink(port);
    await link.open();
    const agent = await startAgent(lockId, link.port, { maxQueuedEvents: Math.max(EVENTS, 10_000) });
    await until(() => agent.client.connected, 'the device to connect');
    await t.app.deviceRuntime.settled();
    await link.cut();
    await until(() => !agent.client.connected, 'the device to see the link cut');
    // The door sensor while the building is cut off: opened, closed, opened … each one a signed, chained event.
    const recordStart = performance.now();
    for (let i = 0; i < EVENTS; i++) agent.controller.report({ type: i % 2 === 0 ? 'door_opened' : 'door_closed' });
    const log = (agent as unknown as { events: { idle(): Promise<void>; pending: readonly unknown[] } }).events;
    await until(async () => (await log.idle(), log.pending.length === EVENTS), 'the events on disk');
    const recordMs = performance.now() - recordStart;
    row(`record ${EVENTS.toLocaleString('en')} events offline on the device (sign, chain, on disk)`, `${((EVENTS / recordMs) * 1000).toFixed(0)} events/s (${(recordMs / 1000).toFixed(1)} s)`);
    let connectedAt = 0;
    agent.client.once('connect', () => (connectedAt = performance.now()));
    await link.open();
    // The last seq logged, read from the device's row (one index probe) every 100 ms: the figure is within 0.1 s.
    const lastLogged = async () =>
      rowsOf<{ seq: number }>(await t.database.db.execute(sql`select event_seq::int as seq from lock_devices where lock_id = ${lockId}::uuid`))[0]?.seq ?? 0;
    // Bounded: past DOOR_DELIVERY_TIMEOUT_S the rate so far is the figure, and what was logged by then is checked.
    const deadline = Date.now() + DELIVERY_TIMEOUT_S * 1000;
    let last = 0;
    while ((last = await lastLogged()) < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const deliveredMs = performance.now() - connectedAt;
    const [check] = rowsOf<{ entries: number; seqs: number; min: number; max: number; gaps: number; offline: number }>(
      await t.database.db.execute(sql`
        select count(*)::int as entries, count(distinct device_seq)::int as seqs, min(device_seq)::int as min, max(device_seq)::int as max,
               count(*) filter (where type = 'AUDIT_GAP')::int as gaps, count(*) filter (where offline)::int as offline
        from lock_activity where lock_id = ${lockId}::uuid and source = 'device' and device_seq <= ${last}`),
    );
    const intact = check!.entries === last && check!.seqs === last && check!.min === 1 && check!.max === last && check!.gaps === 0;
    const perS = (last / deliveredMs) * 1000;
    const all = last >= EVENTS;
    row(
      `deliver ${EVENTS.toLocaleString('en')} offline events after reconnection → logged by the platform`,
      `${perS.toFixed(0)} events/s (${all ? 'all' : `${last.toLocaleString('en')} of them`} in ${(deliveredMs / 1000).toFixed(1)} s from the reconnection)`,
      `≥ ${EVENTS_BUDGET_PER_S.toLocaleString('en')}/s`,
      perS >= EVENTS_BUDGET_PER_S ? 'met' : 'NOT met',
    );
    row(
      'offline events lost or doubled (entries, distinct seq, first…last, gap entries, marked offline)',
      `${intact ? 'none' : 'LOST OR DOUBLED'}: ${check!.entries} entries, ${check!.seqs} seqs, ${check!.min}…${check!.max}, ${check!.gaps} gaps, ${check!.offline} offline${all ? '' : ` (the ${last.toLocaleString('en')} logged by then)`}`,
      'none',
      intact ? 'met' : 'NOT met',
    );
    await agent.stop();
    await link.cut();
  }

  // ─── c. Revocation to refusal with many devices online ───────────────────────────────────────────────
  if (PARTS.has('revocation')) {
    const provisionStart = performance.now();
    const lockIds = rowsOf<{ id: string }>(
      await t.database.db.execute(sql`insert into locks (application_id, name) select ${sandbox.applicationId}::uuid, 'Swarm ' || g from generate_series(1, ${ONLINE}) g returning id`),
    ).map((r) => r.id);
    const devices: { deviceId: string; key: string; cert: string }[] = [];
    let ca = '';
    for (const lockId of lockIds) {
      const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
      devices.push({ deviceId: device.deviceId, key: device.key.privateKeyPem, cert: device.certificate });
      ca = device.caCertificates[0]!;
    }
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-door-swarm-')), 'devices.json');
    stateDirs.push(path.dirname(file));
    fs.writeFileSync(file, JSON.stringify({ url: `mqtts://127.0.0.1:${port}`, ca, devices }));
    const swarm = fork(path.join(import.meta.dirname, 'device-swarm.mjs'), [file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const done = await new Promise<{ connected: number; failed: number }>((resolve, reject) => {
      swarm.on('message', (m: { done?: boolean; connected: number; failed: number }) => m.done && resolve(m));
      swarm.on('exit', (code) => reject(new Error(`device-swarm exited (${code})`)));
    });
    await until(async () => rowsOf<{ n: number }>(await t.database.db.execute(sql`select count(*)::int as n from lock_devices where connected and lock_id in (select id from locks where name like 'Swarm %')`))[0]!.n >= done.connected, 'the platform to record the swarm online');
    row(`devices online (own certificates, TLS, from another process)`, `${done.connected} of ${ONLINE} (${done.failed} failed; set up in ${((performance.now() - provisionStart) / 1000).toFixed(0)} s)`);

    const lockId = await createLock(t, sandbox.applicationId, { unlockTime: 1 });
    const alice = await certify(t, await appUserToken(sandbox, 'revoked'));
    await share(t, lockId, alice.userId);
    const agent = await startAgent(lockId, port, { httpPort: 0, httpHost: '127.0.0.1', localRefusalLimit: { max: 1_000_000, windowMs: 60_000 } });
    const holds = () => agent.controller.config?.users.some((u) => u.userId === alice.userId) ?? false;
    const local = async () =>
      (await fetch(`http://127.0.0.1:${agent.httpPort}/execute`, { method: 'POST', headers: { 'content-type': 'application/jwt' }, body: signOperation(alice, lockId, UNLOCK) })).status;
    const latencies: number[] = [];
    for (let i = 0; i < REVOCATIONS; i++) {
      await share(t, lockId, alice.userId);
      // The share is put back behind the platform's back: a re-issued config brings it to the door.
      t.app.deviceRuntime.configs.reissue(lockId);
      await until(holds, 'the share to reach the door');
      const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/user/${alice.userId}`, headers: bearer(sandbox.owner.token) });
      if (res.statusCode !== 204) throw new Error(`revoke: ${res.statusCode} ${res.body}`);
      const answered = performance.now();
      while ((await local()) !== 403) {
        // The user's next operation, again, until the door refuses it.
      }
      latencies.push(performance.now() - answered);
    }
    await agent.stop();
    swarm.send('stop');
    await new Promise((resolve) => swarm.once('exit', resolve));
    latencies.sort((x, y) => x - y);
    const p99 = percentile(latencies, 99);
    row(
      `revocation with ${done.connected.toLocaleString('en')} devices online: API 204 → the door refuses the user, p50 / p99 (${REVOCATIONS} revocations)`,
      `${percentile(latencies, 50).toFixed(1)} ms / ${p99.toFixed(1)} ms`,
      `p99 ≤ ${REVOCATION_P99_BUDGET_MS} ms`,
      p99 <= REVOCATION_P99_BUDGET_MS ? 'met' : 'NOT met',
    );
  }
} finally {
  await t.close();
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
}
console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
for (const [section, metric, value, budget, verdict] of rows) console.log(`| ${section} | ${metric} | ${value} | ${budget ?? ''} | ${verdict ?? ''} |`);
