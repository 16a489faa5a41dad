#!/usr/bin/env node
// Locks that connect over MQTT (the built service as a process, lib.mjs):
// 1. An unlock through a connected device — API → broker → the device (`latchkey-device run --actuator
//    virtual`, its own process) verifies → result → 204 — with pre-signed unique operations at 16
//    connections, paired with the same unlock on a virtual (sandbox) lock of the same service.
//    Budgets: p99 ≤ 50 ms, req/s ≥ 0.5× the virtual lock's. On the embedded broker and on Mosquitto 2
//    (MQTT_URL), when /usr/sbin/mosquitto is installed.
// 2. DEVICES_COUNT (default 10,000) devices, each with its own certificate, connected at once to the
//    embedded broker over TLS from DEVICES_WORKERS separate processes (bench/device-swarm.mjs): the
//    service's memory per idle device (goal ≤ 64 KB), and with them connected, how long a device going
//    offline or online takes to reach the portal's live view (the application's lock event stream):
//    p99 over DEVICES_CHANGES changes (budget ≤ 1 s).
// Run alone (`node bench/devices.mjs`; DEVICES_PARTS=unlock,swarm picks the parts, and
// DEVICES_UNLOCK=pglite,postgres,mosquitto the unlock's set-ups) or from run.mjs (BENCH_PARTS=devices).
import 'reflect-metadata';
import { execSync, fork, spawn, spawnSync } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { TextDecoder } from 'node:util';
import * as x509 from '@peculiar/x509';
import mqtt from 'mqtt';
import pg from 'pg';
import { api, freePort, median, paired, percentile, root, scratchDatabase, startService } from './lib.mjs';
import { presign, setUp, unlockRound } from './signed-unlock.mjs';
import { pool } from './fleet.mjs';
import { writeLocalMosquittoConfig } from '../deploy/mosquitto/local.mjs';

x509.cryptoProvider.set(webcrypto);

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;
const UNLOCK_P99_BUDGET_MS = 50;
const UNLOCK_RATIO_BUDGET = 0.5;
/** The channels whose notices are counted per device unlock on PostgreSQL: the broker's bridge, the live view. */
const NOTICE_CHANNELS = ['latchkey_mqtt', 'latchkey_locks'];
const IDLE_DEVICE_GOAL_KB = 64;
const PRESENCE_P99_BUDGET_MS = 1000;
const DEVICES = Number(process.env.DEVICES_COUNT ?? 10_000);
const WORKERS = Number(process.env.DEVICES_WORKERS ?? 3);
const CHANGES = Number(process.env.DEVICES_CHANGES ?? 100);
/** An application holds at most 50 locks, and a lock at most one device. */
const LOCKS_PER_APPLICATION = 50;
const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((f) => fs.existsSync(f));
const deviceCli = ['--import', 'tsx', path.join(root, 'packages/device/src/cli.ts')];

if (!fs.existsSync(path.join(root, 'apps/api/dist/main.js')))
  execSync('npm run build -w @latchkey/api --silent', { cwd: root, stdio: 'inherit' });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = (v) => `${v.toFixed(2)} ms`;
const ok = (b) => (b ? 'met' : 'NOT met');


async function waitUntil(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

// ─── 1. Unlock through a device ────────────────────────────────────────────────────────────────────────

/** `latchkey-device` (the package's CLI through tsx) as its own process: provisioned with a code, then run. */
async function startDevice(base, code) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-bench-device-'));
  const provisioned = spawnSync(
    process.execPath,
    [...deviceCli, 'provision', '--api', `${base}/api`, '--code', code, '--dir', dir],
    { cwd: root, encoding: 'utf8' },
  );
  if (provisioned.status !== 0)
    throw new Error(`latchkey-device provision: ${provisioned.stderr || provisioned.stdout}`);
  const child = spawn(process.execPath, [...deviceCli, 'run', '--dir', dir, '--actuator', 'virtual'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (c) => (log = (log + c).slice(-4000)));
  return {
    pid: child.pid,
    log: () => log,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.on('exit', r));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The scratch database's counters (pg_stat_database: commits, rows inserted and updated) and the CPU ticks
 * of its server processes. A backend that flushed its counters less than a second before going idle holds
 * the rest back for 10 s (PostgreSQL 15), and nothing outside it can see that it has: they are read 11 s
 * after the work. The instance's own heartbeat meanwhile (a few transactions a second) is counted with it.
 */
async function databaseCounters(url) {
  await sleep(11_000);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const {
      rows: [last],
    } = await client.query(
      `select xact_commit::int as commits, tup_inserted::int as inserted, tup_updated::int as updated
       from pg_stat_database where datname = current_database()`,
    );
    const { rows } = await client.query(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return { ...last, ticks: new Map(rows.map((r) => [r.pid, cpuTicks(r.pid)])) };
  } finally {
    await client.end();
  }
}

/**
 * Counts the notices sent on each of `channels` of the database at `url`, from now until stop(): what the
 * broker's bridge sends the other instances (latchkey_mqtt) and what the live view is told (latchkey_locks).
 */
async function noticeCounter(url, channels) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const counts = Object.fromEntries(channels.map((c) => [c, 0]));
  client.on('notification', (n) => {
    if (n.channel in counts) counts[n.channel]++;
  });
  for (const channel of channels) await client.query(`listen ${channel}`);
  return { counts: () => ({ ...counts }), stop: () => client.end() };
}

/**
 * Rows of the device unlock against the virtual lock, on the service at `svc` (whichever broker it uses).
 * `databaseUrl`: the service's PostgreSQL database, whose commits and rows per unlock are then counted.
 */
async function deviceUnlockRows(svc, broker, { databaseUrl } = {}) {
  const rows = [];
  const sandbox = await setUp(svc.url);
  const { owner } = sandbox;
  const { body: lock } = await api(svc.url, 'POST', `/platform/application/${owner.appId}/lock`, {
    token: owner.token,
    body: { name: 'Bench device lock' },
  });
  await api(svc.url, 'POST', `/platform/application/${owner.appId}/lock/${lock.id}/user`, {
    token: owner.token,
    body: { userId: sandbox.cert.userId, role: 'USER' },
  });
  const { body: created } = await api(
    svc.url,
    'POST',
    `/platform/application/${owner.appId}/lock/${lock.id}/device`,
    { token: owner.token },
  );
  const device = await startDevice(svc.url, created.provisioningCode);
  let notices = null;
  try {
    const real = { ...sandbox, lockId: lock.id };
    // Connected, and holding a config that names the user: one unlock answers 204.
    const unlockOnce = async () => {
      const res = await fetch(`${svc.url}/api/device/${lock.id}/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.userToken}`, 'content-type': 'application/jwt' },
        body: presign(real, 1)[0],
      });
      await res.text();
      return res.status === 204;
    };
    await waitUntil(unlockOnce, 60_000, 'the device to connect and take its config').catch((e) => {
      throw new Error(`${e.message}\n${device.log()}`);
    });
    notices = databaseUrl ? await noticeCounter(databaseUrl, NOTICE_CHANNELS) : null;
    const warmVirtual = await unlockRound(svc.url, sandbox, 4000, 3, { connections: CONNECTIONS });
    const warmReal = await unlockRound(svc.url, real, 4000, 3, { connections: CONNECTIONS });
    const rounds = (
      await paired(
        () => unlockRound(svc.url, sandbox, warmVirtual.rps, DURATION, { connections: CONNECTIONS }),
        async () => {
          // Where the time goes: CPU of the device's process, the service's and the database's during the
          // round, and the database's commits and rows written per unlock.
          const db0 = databaseUrl ? await databaseCounters(databaseUrl) : null;
          const n0 = notices?.counts();
          const [d0, s0, t0] = [cpuTicks(device.pid), cpuTicks(svc.pid), performance.now()];
          const r = await unlockRound(svc.url, real, warmReal.rps, DURATION, { connections: CONNECTIONS });
          const seconds = (performance.now() - t0) / 1000;
          const [d1, s1] = [cpuTicks(device.pid), cpuTicks(svc.pid)];
          const db1 = databaseUrl ? await databaseCounters(databaseUrl) : null;
          const n1 = notices?.counts();
          return {
            ...r,
            deviceCpu: (d1 - d0) / 100 / seconds,
            serviceCpu: (s1 - s0) / 100 / seconds,
            ...(db0 && {
              // The backends there at both readings: the service's pool.
              databaseCpu: [...db1.ticks].reduce((n, [pid, t]) => n + (db0.ticks.has(pid) ? t - db0.ticks.get(pid) : 0), 0) / 100 / seconds,
              commitsPerUnlock: (db1.commits - db0.commits) / r.used,
              insertedPerUnlock: (db1.inserted - db0.inserted) / r.used,
              updatedPerUnlock: (db1.updated - db0.updated) / r.used,
              noticesPerUnlock: NOTICE_CHANNELS.map((c) => (n1[c] - n0[c]) / r.used),
            }),
          };
        },
      )
    ).map(([v, r]) => ({ ...r, virtual: v, ratio: r.rps / v.rps }));
    const failed = (rs) => rs.reduce((n, r) => n + r.non2xx + r.errors, 0);
    const failedVirtual = failed(rounds.map((r) => r.virtual));
    if (failed(rounds) || failedVirtual)
      rows.push([
        broker,
        'device unlock errors',
        `${failed(rounds)} device, ${failedVirtual} virtual non-2xx or errors`,
        '',
        '',
      ]);
    const ratio = median(rounds.map((r) => r.ratio));
    const p99 = median(rounds.map((r) => r.p99));
    const spread = rounds.map((r) => r.ratio);
    rows.push([
      broker,
      'virtual lock unlock req/s · p50 · p99 @16',
      `${median(rounds.map((r) => r.virtual.rps)).toFixed(0)} · ${ms(median(rounds.map((r) => r.virtual.p50)))} · ${ms(median(rounds.map((r) => r.virtual.p99)))}`,
      '',
      '',
    ]);
    rows.push([
      broker,
      'device unlock req/s @16 (× virtual lock)',
      `${median(rounds.map((r) => r.rps)).toFixed(0)} (${ratio.toFixed(2)}×; rounds ${Math.min(...spread).toFixed(2)}–${Math.max(...spread).toFixed(2)}×)`,
      `≥ ${UNLOCK_RATIO_BUDGET}×`,
      ok(ratio >= UNLOCK_RATIO_BUDGET),
    ]);
    rows.push([
      broker,
      'CPU during the device rounds: device process · service (cores)',
      `${median(rounds.map((r) => r.deviceCpu)).toFixed(2)} · ${median(rounds.map((r) => r.serviceCpu)).toFixed(2)}`,
      '',
      '',
    ]);
    if (databaseUrl) {
      const per = (k) => median(rounds.map((r) => r[k]));
      rows.push([
        broker,
        'database per device unlock: transactions (xact_commit) · rows inserted · rows updated; its CPU (cores)',
        `${per('commitsPerUnlock').toFixed(2)} · ${per('insertedPerUnlock').toFixed(2)} · ${per('updatedPerUnlock').toFixed(2)}; ${per('databaseCpu').toFixed(2)}`,
        '',
        '',
      ]);
      rows.push([
        broker,
        `notices per device unlock: ${NOTICE_CHANNELS.join(' · ')}`,
        NOTICE_CHANNELS.map((_, i) => median(rounds.map((r) => r.noticesPerUnlock[i])).toFixed(2)).join(' · '),
        '',
        '',
      ]);
    }
    rows.push([
      broker,
      'device unlock p50 · p99 @16',
      `${ms(median(rounds.map((r) => r.p50)))} · ${ms(p99)} (worst round ${ms(Math.max(...rounds.map((r) => r.p99)))})`,
      `p99 ≤ ${UNLOCK_P99_BUDGET_MS} ms`,
      ok(p99 <= UNLOCK_P99_BUDGET_MS),
    ]);
  } finally {
    await notices?.stop();
    await device.stop();
  }
  return rows;
}

async function waitForPort(port, timeoutMs = 10_000) {
  await waitUntil(
    () =>
      new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      }),
    timeoutMs,
    `port ${port}`,
  );
}

/**
 * Mosquitto 2 as the device protocol asks of an external broker: TLS with the device CA, require_certificate,
 * use_identity_as_username, the CRL, and the ACL pattern (the service, CN=latchkey-service, may use every
 * device's topics). `material`: {ca, cert, key, crl} PEMs.
 */
async function startMosquitto(material) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-bench-mosquitto-'));
  const port = await freePort();
  const conf = writeLocalMosquittoConfig(dir, { port, ...material });
  const child = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (c) => (log += c));
  try {
    await waitForPort(port);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${err.message}\n${log}`, { cause: err });
  }
  return {
    url: `mqtts://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.on('exit', r));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Which set-ups the unlock part runs: DEVICES_UNLOCK=pglite,postgres,mosquitto (all three when unset). */
const UNLOCK_SETUPS = (process.env.DEVICES_UNLOCK ?? 'pglite,postgres,mosquitto').split(',');

export async function benchDeviceUnlock() {
  const rows = [];
  if (UNLOCK_SETUPS.includes('pglite')) {
    const svc = await startService();
    try {
      rows.push(...(await deviceUnlockRows(svc, 'embedded broker')));
    } finally {
      await svc.stop();
    }
  }
  // The same on PostgreSQL: its commits are flushed by the server's own processes, not on the service's
  // thread as PGlite's are, so the pair shows how much of a device unlock waits on the embedded database.
  const pgAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (pgAdminUrl && UNLOCK_SETUPS.includes('postgres')) {
    const scratch = await scratchDatabase(pgAdminUrl);
    const svc = await startService({ DATABASE_URL: scratch.url });
    try {
      rows.push(...(await deviceUnlockRows(svc, 'embedded broker, PostgreSQL', { databaseUrl: scratch.url })));
    } finally {
      await svc.stop();
      await scratch.drop();
    }
  }
  if (!UNLOCK_SETUPS.includes('mosquitto')) return rows;
  if (!MOSQUITTO) {
    rows.push([
      'mosquitto',
      'device unlock',
      'skipped: no /usr/sbin/mosquitto on this host',
      '',
      'not measured',
    ]);
    return rows;
  }
  // The broker's server certificate comes from the device CA, whose key only the database holds: the
  // service creates the CA on a data directory (its CRL read from it then), stops, and
  // `keys.js broker-certificate` writes the certificate from that database; the service then starts again
  // on it as a client of Mosquitto (MQTT_URL).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-bench-mqtt-'));
  const certDir = path.join(dataDir, 'broker');
  let broker;
  try {
    const first = await startService({}, { dataDir });
    const crl = await (await fetch(`${first.url}/api/device-ca/crl.pem`)).text();
    await first.stop();
    const issued = spawnSync(
      process.execPath,
      ['apps/api/dist/keys.js', 'broker-certificate', certDir, '127.0.0.1', 'localhost'],
      {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      },
    );
    if (issued.status !== 0) throw new Error(`keys.js broker-certificate: ${issued.stderr}`);
    const read = (f) => fs.readFileSync(path.join(certDir, f), 'utf8');
    broker = await startMosquitto({
      ca: read('ca.pem'),
      cert: read('server.pem'),
      key: read('server.key'),
      crl,
    });
    const svc = await startService({ MQTT_URL: broker.url }, { dataDir });
    try {
      rows.push(...(await deviceUnlockRows(svc, 'mosquitto 2')));
    } finally {
      await svc.stop();
    }
  } finally {
    await broker?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

// ─── 2. Many devices connected at once ─────────────────────────────────────────────────────────────────

/** A device's key and CSR as `latchkey-device provision` makes them: ECDSA P-256, no subject. */
async function keyAndCsr() {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: '',
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  const key = x509.PemConverter.encode(
    await webcrypto.subtle.exportKey('pkcs8', keys.privateKey),
    'PRIVATE KEY',
  );
  return { key, csr: csr.toString('pem') };
}

const vmRssKb = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const cpuTicks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, after the name
};
async function metrics(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const get = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rss: get('process_resident_memory_bytes'),
    heapUsed: get('nodejs_heap_size_used_bytes'),
    heapTotal: get('nodejs_heap_size_total_bytes'),
    devicesConnected: get('latchkey_devices_connected'),
  };
}
/** Until the service uses under 5 % of a core for 3 s running (at most `timeoutMs`): what it does after a change has settled. */
async function quiet(pid, timeoutMs = 180_000) {
  const end = Date.now() + timeoutMs;
  let calm = 0;
  while (Date.now() < end && calm < 3) {
    const a = cpuTicks(pid);
    await sleep(1000);
    calm = (cpuTicks(pid) - a) / 100 < 0.05 ? calm + 1 : 0;
  }
  return calm >= 3;
}
/** The median of five readings a second apart: RSS from /proc, heap from the service's own metrics. */
async function memory(pid, metricsPort) {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    samples.push({ rss: vmRssKb(pid) * 1024, ...(await metrics(metricsPort)) });
    await sleep(1000);
  }
  return {
    rss: median(samples.map((s) => s.rss)),
    heapUsed: median(samples.map((s) => s.heapUsed)),
    heapTotal: median(samples.map((s) => s.heapTotal)),
    devicesConnected: samples.at(-1).devicesConnected,
  };
}

/** The application's lock events as the portal reads them (fetch, bearer); `on(event, body)` for each. */
async function followLockEvents(base, appId, token, on) {
  const res = await fetch(`${base}/api/platform/application/${appId}/lock/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  if (!res.ok) throw new Error(`lock events → ${res.status}`);
  const reader = res.body.getReader();
  (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) on(event, JSON.parse(data));
      }
    }
  })().catch(() => {});
  return () => void reader.cancel().catch(() => {});
}

export async function benchDeviceSwarm({ count = DEVICES, workers = WORKERS, changes = CHANGES } = {}) {
  const rows = [];
  // DEVICES_SWARM_DB=postgres: the service on a scratch PostgreSQL database (BENCH_DATABASE_URL or
  // TEST_DATABASE_URL) instead of PGlite, whose WebAssembly memory grows with what it records and is
  // counted in the service's RSS.
  const pgAdminUrl = process.env.DEVICES_SWARM_DB === 'postgres' ? (process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL) : null;
  if (process.env.DEVICES_SWARM_DB === 'postgres' && !pgAdminUrl) throw new Error('DEVICES_SWARM_DB=postgres needs BENCH_DATABASE_URL or TEST_DATABASE_URL');
  const scratch = pgAdminUrl ? await scratchDatabase(pgAdminUrl) : null;
  const section = scratch ? 'embedded broker, PostgreSQL' : 'embedded broker';
  const metricsPort = await freePort();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-bench-swarm-'));
  // A fixed broker port: the devices keep the URL they were given across the service's restart below.
  // The owner's token outlives the whole set-up (provisioning thousands of devices takes minutes).
  const env = {
    METRICS_PORT: String(metricsPort),
    MQTT_PORT: String(await freePort()),
    ACCESS_TOKEN_TTL_SECONDS: '7200',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
  const dataDir = path.join(tmp, 'data');
  fs.mkdirSync(dataDir);
  let svc = await startService(env, { dataDir });
  const swarm = [];
  try {
    rows.push([
      section,
      'file descriptors (ulimit -n)',
      execSync('sh -c "ulimit -n"', { encoding: 'utf8' }).trim(),
      '',
      '',
    ]);
    // An owner with ⌈count ÷ 50⌉ applications of 50 locks each (the Front Door and 49 more).
    const email = `swarm.${Date.now()}@example.com`;
    const { body: auth } = await api(svc.url, 'POST', '/auth/register', {
      body: { email, password: 'bench-password', displayName: 'Swarm' },
    });
    const token = auth.authToken;
    let t = Date.now();
    const appIds = await pool(
      Array.from({ length: Math.ceil(count / LOCKS_PER_APPLICATION) }, (_, i) => i),
      8,
      async (i) => {
        const { res } = await api(svc.url, 'POST', '/platform/application', {
          token,
          body: { name: `Swarm ${i}`, companyName: 'Swarm Ltd', mailingAddress: '1 Swarm Road' },
        });
        return res.headers.get('location').split('/').pop();
      },
    );
    const locks = (
      await pool(appIds, 4, async (appId) => {
        const { body: existing } = await api(svc.url, 'GET', `/platform/application/${appId}/lock`, {
          token,
        });
        const made = await pool(
          Array.from({ length: LOCKS_PER_APPLICATION - existing.length }, (_, i) => i),
          4,
          async (i) =>
            (
              await api(svc.url, 'POST', `/platform/application/${appId}/lock`, {
                token,
                body: { name: `Door ${i}` },
              })
            ).body,
        );
        return [...existing, ...made].map((l) => ({ appId, lockId: l.id }));
      })
    )
      .flat()
      .slice(0, count);
    rows.push([
      section,
      `set-up: ${appIds.length} applications, ${locks.length} locks`,
      `${((Date.now() - t) / 1000).toFixed(1)} s`,
      '',
      '',
    ]);

    // Each device its own key and certificate: CSRs made here ahead, then code + CSR → certificate through the API.
    t = Date.now();
    const csrs = await pool(locks, 8, () => keyAndCsr());
    rows.push([
      section,
      `${count} ECDSA P-256 keys and CSRs (bench side)`,
      `${((Date.now() - t) / 1000).toFixed(1)} s`,
      '',
      '',
    ]);
    t = Date.now();
    const PROVISION_CONCURRENCY = 16;
    const devices = await pool(locks, PROVISION_CONCURRENCY, async ({ appId, lockId }, i) => {
      const { body: created } = await api(
        svc.url,
        'POST',
        `/platform/application/${appId}/lock/${lockId}/device`,
        { token },
      );
      const { body: provisioned } = await api(svc.url, 'POST', '/device-provisioning', {
        body: { code: created.provisioningCode, csr: csrs[i].csr },
      });
      return {
        appId,
        lockId,
        deviceId: provisioned.deviceId,
        key: csrs[i].key,
        cert: provisioned.certificate,
        mqttUrl: provisioned.mqttUrl,
        ca: provisioned.caCertificates[0],
      };
    });
    const provisionS = (Date.now() - t) / 1000;
    rows.push([
      section,
      `provisioning ${count} devices through the API @${PROVISION_CONCURRENCY} (code + CSR → certificate)`,
      `${provisionS.toFixed(1)} s (${(count / provisionS).toFixed(0)} devices/s)`,
      '',
      '',
    ]);

    // The memory before is a fresh process's with every device provisioned, not one still holding the
    // garbage of provisioning: the service starts again on the same data, and the probe (the first device,
    // kept in this process; the rest go to the worker processes) connects, so TLS and MQTT code is warm.
    await svc.stop();
    svc = await startService(env, { dataDir });
    const [probe, ...idle] = devices;
    const { mqttUrl, ca } = probe;
    // Presence: the probe drops its connection (the broker publishes its Last Will) or connects again and
    // says `online`; measured until the application's lock event stream shows the lock's device so.
    let waiting = null;
    const stopEvents = await followLockEvents(svc.url, probe.appId, token, (event, body) => {
      if (
        event === 'lock' &&
        body.id === probe.lockId &&
        waiting &&
        body.device?.connected === waiting.connected
      )
        waiting.resolve(performance.now());
    });
    const seen = (connected) => {
      let timer;
      return new Promise((resolve) => {
        waiting = { connected, resolve };
        timer = setTimeout(() => resolve(null), 10_000);
      }).finally(() => {
        clearTimeout(timer);
        waiting = null;
      });
    };
    const connectProbe = () =>
      new Promise((resolve, reject) => {
        const c = mqtt.connect(mqttUrl, {
          clientId: probe.deviceId,
          key: probe.key,
          cert: probe.cert,
          ca,
          protocolVersion: 4,
          keepalive: 300,
          reconnectPeriod: 0,
          connectTimeout: 30_000,
          will: {
            topic: `latchkey/d/${probe.deviceId}/presence`,
            payload: Buffer.from('offline'),
            qos: 1,
            retain: true,
          },
        });
        c.once('connect', () =>
          c
            .publishAsync(`latchkey/d/${probe.deviceId}/presence`, 'online', { qos: 1, retain: true })
            .then(() => resolve(c), reject),
        );
        c.once('error', reject);
      });
    let client;
    {
      const online = seen(true);
      client = await connectProbe();
      if ((await online) === null) throw new Error('the probe device never showed online in the lock events');
    }
    await quiet(svc.pid);
    const before = await memory(svc.pid, metricsPort);

    t = Date.now();
    const status = new Map();
    const done = [];
    for (let w = 0; w < workers; w++) {
      const part = idle.filter((_, i) => i % workers === w);
      const file = path.join(tmp, `swarm-${w}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          url: mqttUrl,
          ca,
          devices: part.map(({ deviceId, key, cert }) => ({ deviceId, key, cert })),
        }),
      );
      const child = fork(path.join(import.meta.dirname, 'device-swarm.mjs'), [file], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      swarm.push(child);
      done.push(
        new Promise((resolve, reject) => {
          child.on('message', (m) => {
            status.set(w, m);
            if (m.done) resolve(m);
          });
          child.on('exit', (code) => reject(new Error(`swarm worker ${w} exited (${code})`)));
        }),
      );
    }
    const progress = setInterval(() => {
      const all = [...status.values()];
      console.log(
        `    … ${all.reduce((n, s) => n + s.connected, 0)} connected, ${all.reduce((n, s) => n + s.failed, 0)} failed (${((Date.now() - t) / 1000).toFixed(0)} s)`,
      );
    }, 10_000);
    const results = await Promise.all(done).finally(() => clearInterval(progress));
    const connectS = (Date.now() - t) / 1000;
    const connected = results.reduce((n, r) => n + r.connected, 0);
    const failedConnects = results.reduce((n, r) => n + r.failed, 0);
    const errors = {};
    for (const r of results) for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
    rows.push([
      section,
      `devices connected at once over TLS (${workers} client processes)`,
      `${connected} of ${idle.length} in ${connectS.toFixed(1)} s${failedConnects ? `; ${failedConnects} failed: ${JSON.stringify(errors)}` : ''}`,
      `${count - 1} (+ the probe)`,
      connected === idle.length ? 'met' : 'NOT met',
    ]);
    const settled = await quiet(svc.pid);
    const after = await memory(svc.pid, metricsPort);
    const perDevice = (after.rss - before.rss) / Math.max(connected, 1) / 1024;
    rows.push([
      section,
      'service RSS · heap used, provisioned idle → all connected',
      `${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB · ${(before.heapUsed / 2 ** 20).toFixed(0)} → ${(after.heapUsed / 2 ** 20).toFixed(0)} MiB (devices online per the service: ${after.devicesConnected}${settled ? '' : '; the service had not gone quiet in 180 s'})`,
      '',
      '',
    ]);
    rows.push([
      section,
      'memory per idle device (RSS · heap used)',
      `${perDevice.toFixed(1)} KB · ${((after.heapUsed - before.heapUsed) / Math.max(connected, 1) / 1024).toFixed(1)} KB`,
      `≤ ${IDLE_DEVICE_GOAL_KB} KB`,
      ok(perDevice <= IDLE_DEVICE_GOAL_KB),
    ]);

    const latencies = { offline: [], online: [] };
    let missed = 0;
    for (let i = 0; i < changes; i++) {
      await sleep(100 + Math.random() * 200);
      const goingOnline = i % 2 === 1;
      const shown = seen(goingOnline);
      const t0 = performance.now();
      if (goingOnline) client = await connectProbe();
      else client.stream.destroy(); // the connection drops: no DISCONNECT, so the broker sends the Last Will
      const t1 = await shown;
      if (t1 === null) missed++;
      else latencies[goingOnline ? 'online' : 'offline'].push(t1 - t0);
    }
    client.end(true);
    stopEvents();
    const all = [...latencies.offline, ...latencies.online].sort((a, b) => a - b);
    const sorted = (xs) => [...xs].sort((a, b) => a - b);
    const p99 = percentile(all, 99);
    rows.push([
      section,
      `presence change → lock event stream, with ${connected + 1} devices connected (${changes} changes)`,
      `p50 ${ms(percentile(all, 50))} · p99 ${ms(p99)} · max ${ms(all.at(-1))}; offline (Last Will) p50 ${ms(percentile(sorted(latencies.offline), 50))}, online (TLS connect + publish) p50 ${ms(percentile(sorted(latencies.online), 50))}${missed ? `; ${missed} not shown within 10 s` : ''}`,
      `p99 ≤ ${PRESENCE_P99_BUDGET_MS} ms`,
      ok(!missed && p99 <= PRESENCE_P99_BUDGET_MS),
    ]);
  } finally {
    await Promise.all(
      swarm.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.removeAllListeners('exit');
            child.once('exit', resolve);
            child.send('stop');
            setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
          }),
      ),
    );
    await svc.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    await scratch?.drop();
  }
  return rows;
}

/** Rows for the bench table: [section, metric, value, budget, verdict]. DEVICES_PARTS=unlock,swarm (both when unset). */
export async function benchDevices({
  parts = (process.env.DEVICES_PARTS ?? 'unlock,swarm').split(','),
} = {}) {
  const rows = [];
  if (parts.includes('unlock')) rows.push(...(await benchDeviceUnlock()));
  if (parts.includes('swarm')) rows.push(...(await benchDeviceSwarm()));
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchDevices();
  console.log('| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
