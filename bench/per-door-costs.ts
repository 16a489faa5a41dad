// What one door costs the platform, per thing it does, for docs/scale.md: one service in this process (as the
// API tests build it) on PostgreSQL (TEST_DB_KIND=postgres TEST_DATABASE_URL=…; PGlite without), the embedded
// broker, and one door — the device package's DeviceAgent in a process of its own (per-door-device.ts).
// For each of PER_DOOR_UNLOCKS unlocks through the door (16 at a time, as POST /device/{lockId}/execute),
// the same number on a virtual lock, PER_DOOR_EVENTS door-sensor events and PER_DOOR_REISSUES config
// re-issues (as many locks with a connected device, re-signed through the reissuer's path), and
// PER_DOOR_IDLE_S seconds of nothing: the database's transactions (xact_commit: every statement outside a
// transaction is one, reads too) and rows inserted and updated (pg_stat_database, read once its counters settle), the service's CPU (process.cpuUsage: the requests go
// through app.inject, so without the HTTP socket's share) and the database server's CPU (its backends for
// this database), each divided by the count (the idle instance's own transactions and rows per second taken
// off); and the bytes on disk of a log entry and of a door.
// Run: `TEST_DB_KIND=postgres TEST_DATABASE_URL=postgres://… node --import tsx bench/per-door-costs.ts`.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { StateDir, saveProvisioning } from '@latchkey/device';
import { createTestApp } from '../apps/api/test/helpers.ts';
import { provisionDevice } from '../apps/api/test/fixtures/devices.ts';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation } from '../apps/api/test/fixtures/operations.ts';
import { REISSUES_PER_TICK } from '../apps/api/src/modules/devices/runtime/config-reissue.ts';

const UNLOCKS = Number(process.env.PER_DOOR_UNLOCKS ?? 2_000);
const EVENTS = Number(process.env.PER_DOOR_EVENTS ?? 5_000);
const REISSUES = Number(process.env.PER_DOOR_REISSUES ?? 1_000);
const IDLE_S = Number(process.env.PER_DOOR_IDLE_S ?? 10);
const CONCURRENCY = 16;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

const t = await createTestApp({ MQTT_PORT: '0', RATE_LIMIT_MAX: '100000000', REFUSED_OPERATION_RATE_LIMIT_MAX: '100000000' });
const postgres = t.database.kind === 'postgres';
const port = (await t.app.mqtt.listen())!;
const sandbox = await createSandbox(t);
const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => Promise<boolean>, what: string, ms = 300_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
};
const ticks = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
};

interface Counters {
  commits: number;
  inserted: number;
  updated: number;
  /** CPU ticks (1/100 s) of this database's server processes, by pid. */
  backends: Map<number, number>;
  cpu: NodeJS.CpuUsage;
  at: number;
}

/**
 * The database's counters, the service's CPU and the backends' CPU. A backend that flushed its counters less
 * than a second before going idle holds the rest back for 10 s (PostgreSQL 15's PGSTAT_IDLE_INTERVAL), and
 * nothing outside it can see that it has: the counters are read 11 s after the work. What the instance does
 * meanwhile on its own (its heartbeat) is measured first and taken off each batch's figures (`per`).
 */
async function counters(): Promise<Counters> {
  if (postgres) await sleep(11_000);
  const last = postgres
    ? rowsOf<{ commits: number; inserted: number; updated: number }>(
        await t.database.db.execute(sql`select xact_commit::int as commits, tup_inserted::int as inserted, tup_updated::int as updated from pg_stat_database where datname = current_database()`),
      )[0]!
    : { commits: 0, inserted: 0, updated: 0 };
  const pids = postgres
    ? rowsOf<{ pid: number }>(await t.database.db.execute(sql`select pid from pg_stat_activity where datname = current_database()`)).map((r) => r.pid)
    : [];
  return { ...last, backends: new Map(pids.map((pid) => [pid, ticks(pid)])), cpu: process.cpuUsage(), at: performance.now() };
}

const rows: string[][] = [];
/** The costs between two readings, per one of `count` things done. */
let background = { commits: 0, inserted: 0, updated: 0, cpuMs: 0 };
function per(what: string, count: number, a: Counters, b: Counters, wallMs: number) {
  const cpu = process.cpuUsage(a.cpu);
  const seconds = (b.at - a.at) / 1000;
  const serviceMs = (cpu.user + cpu.system) / 1000 - background.cpuMs * seconds;
  let dbTicks = 0;
  for (const [pid, v] of b.backends) if (a.backends.has(pid)) dbTicks += v - a.backends.get(pid)!;
  const figures = {
    what,
    count,
    commits: (b.commits - a.commits - background.commits * seconds) / count,
    inserted: (b.inserted - a.inserted - background.inserted * seconds) / count,
    updated: (b.updated - a.updated - background.updated * seconds) / count,
    serviceCpuMs: serviceMs / count,
    databaseCpuMs: (dbTicks * 10) / count,
    perSecond: (count / wallMs) * 1000,
  };
  console.log(`FIGURES ${JSON.stringify(figures)}`);
  rows.push([
    what,
    `${count.toLocaleString('en')} in ${(wallMs / 1000).toFixed(1)} s (${figures.perSecond.toFixed(0)}/s)`,
    postgres ? `${figures.commits.toFixed(3)} · ${figures.inserted.toFixed(2)} · ${figures.updated.toFixed(2)}` : '(PGlite: not counted)',
    `${figures.serviceCpuMs.toFixed(3)} ms`,
    postgres ? `${figures.databaseCpuMs.toFixed(3)} ms` : '—',
  ]);
}

const sizeOf = async (tables: string[]) =>
  rowsOf<{ bytes: number }>(
    await t.database.db.execute(sql.raw(`select (${tables.map((name) => `pg_total_relation_size('${name}')`).join(' + ')})::bigint as bytes`)),
  ).map((r) => Number(r.bytes))[0]!;

const stateDirs: string[] = [];
let door: ReturnType<typeof fork> | null = null;
try {
  // The door: a lock with its device, and alice sharing it.
  const lockId = await createLock(t, sandbox.applicationId, { unlockTime: 5 });
  const alice = await certify(t, await appUserToken(sandbox, 'alice'));
  await share(t, lockId, alice.userId);
  const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-per-door-'));
  stateDirs.push(dir);
  await saveProvisioning(new StateDir(dir), { ...device, mqttUrl: `mqtts://127.0.0.1:${port}` }, device.key.privateKeyPem, 'http://127.0.0.1');
  door = fork(path.join(import.meta.dirname, 'per-door-device.ts'), [dir], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    door!.once('message', () => resolve());
    door!.once('exit', (code) => reject(new Error(`the door exited (${code})`)));
  });
  // Once the door holds a config naming alice, her unlock is answered 204.
  await until(async () => (await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode === 204, 'the door to take its config', 60_000);
  // Nothing happening, the door connected: one instance's own background work (heartbeat, pruning), per second.
  {
    const a = await counters();
    await sleep(IDLE_S * 1000);
    const b = await counters();
    const seconds = (b.at - a.at) / 1000;
    per('idle instance, per second', seconds, a, b, b.at - a.at);
    const cpu = process.cpuUsage(a.cpu);
    background = {
      commits: (b.commits - a.commits) / seconds,
      inserted: (b.inserted - a.inserted) / seconds,
      updated: (b.updated - a.updated) / seconds,
      cpuMs: (cpu.user + cpu.system) / 1000 / seconds,
    };
  }
  const virtualLock = await createLock(t, sandbox.applicationId, { unlockTime: 5 });
  await share(t, virtualLock, alice.userId);

  /** `count` unlocks of `lock`, signed beforehand, CONCURRENCY at a time. */
  const unlocks = async (lock: string, count: number, what: string) => {
    const signed = Array.from({ length: count }, () => signOperation(alice, lock, UNLOCK));
    await execute(t, lock, alice.token, signOperation(alice, lock, UNLOCK));
    const a = await counters();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < signed.length) {
          const res = await execute(t, lock, alice.token, signed[next++]!);
          if (res.statusCode !== 204) failed++;
        }
      }),
    );
    const wall = performance.now() - a.at;
    const b = await counters();
    if (failed) throw new Error(`${failed} of ${count} unlocks of ${what} not answered 204`);
    per(what, count, a, b, wall);
  };
  await unlocks(lockId, UNLOCKS, 'unlock through the door (device)');
  await unlocks(virtualLock, UNLOCKS, 'unlock of a virtual lock (for comparison)');

  // Door-sensor events, online: each signed and chained by the door, verified and logged once by the service.
  {
    const seq = async () => rowsOf<{ seq: number }>(await t.database.db.execute(sql`select event_seq::int as seq from lock_devices where lock_id = ${lockId}::uuid`))[0]?.seq ?? 0;
    const first = await seq();
    const activityBytes = await sizeOf(['lock_activity']);
    const entries = async () => rowsOf<{ n: number }>(await t.database.db.execute(sql`select count(*)::int as n from lock_activity`))[0]!.n;
    const entriesBefore = await entries();
    const a = await counters();
    door.send({ events: EVENTS });
    await until(async () => (await seq()) >= first + EVENTS, 'the events to be logged');
    const wall = performance.now() - a.at;
    const b = await counters();
    per('door event (door opened / closed)', EVENTS, a, b, wall);
    const added = (await entries()) - entriesBefore;
    rows.push(['bytes on disk per log entry (lock_activity with its indexes)', `${(((await sizeOf(['lock_activity'])) - activityBytes) / added).toFixed(0)} B over ${added.toLocaleString('en')} entries`, '', '', '']);
  }

  // Config re-issues: REISSUES locks with a connected device each, re-signed through the reissuer's path.
  {
    const doorTables = ['locks', 'lock_devices', 'lock_shares'];
    const before = await sizeOf(doorTables);
    const lockIds = rowsOf<{ id: string }>(
      await t.database.db.execute(sql`insert into locks (application_id, name) select ${sandbox.applicationId}::uuid, 'Door ' || g from generate_series(1, ${REISSUES}) g returning id`),
    ).map((r) => r.id);
    const inList = sql`(select jsonb_array_elements_text(${JSON.stringify(lockIds)}::jsonb)::uuid)`;
    await t.database.db.execute(sql`insert into lock_devices (lock_id, provisioned_at, connected) select id, now(), true from locks where id in ${inList}`);
    await t.database.db.execute(sql`insert into lock_shares (lock_id, user_id) select id, ${alice.userId}::uuid from locks where id in ${inList}`);
    rows.push(['bytes on disk per door (a lock, its device row, one share)', `${(((await sizeOf(doorTables)) - before) / REISSUES).toFixed(0)} B over ${REISSUES.toLocaleString('en')} doors`, '', '', '']);
    const configs = t.app.deviceRuntime.configs;
    await t.app.deviceRuntime.settled();
    const a = await counters();
    for (let i = 0; i < lockIds.length; i += REISSUES_PER_TICK) {
      for (const id of lockIds.slice(i, i + REISSUES_PER_TICK)) configs.reissue(id);
      await configs.idle();
    }
    const wall = performance.now() - a.at;
    const b = await counters();
    per('config re-issue (read, version, sign, publish retained)', REISSUES, a, b, wall);
    await t.database.db.execute(sql`delete from locks where id in ${inList}`);
  }

} finally {
  door?.send('stop');
  if (door) await new Promise((resolve) => door!.once('exit', resolve));
  await t.close();
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
}

console.log(`\nper-door costs on ${postgres ? 'PostgreSQL' : 'PGlite'}, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| what | count | database: transactions · rows inserted · rows updated, each | service CPU each | database CPU each |\n|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
