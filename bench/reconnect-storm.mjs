#!/usr/bin/env node
// The reconnect storm: FLEET_COUNT (default 10,000) provisioned devices, each with its own certificate,
// connected to the embedded broker from FLEET_WORKERS (default 3) client processes (device-swarm.mjs, which
// reconnect as the device's agent does); then the service restarts on the same data and port, and every
// device comes back on its own. Budget: all connected again within 60 s of the broker's port opening, none
// refused for good, and a connect rate ≥ 0.5× the floor's: bare Aedes behind the same mutual TLS
// (bare-aedes.mjs), restarted under the same swarm.
// `node bench/reconnect-storm.mjs`; FLEET_DB=postgres (a scratch database from BENCH_DATABASE_URL or
// TEST_DATABASE_URL; PGlite otherwise), FLEET_CACHE=<dir> keeps the provisioned fleet for the next run,
// FLEET_PROFILE=<dir> writes the restarted service's CPU profile there, FLEET_PARTS=floor,service,
// BARE_MAX_PENDING=<n> gives the floor the embedded broker's limit of pending handshakes. The restarted
// service counts the statements it sends its database (bench/statement-count.mjs): per reconnect, from the
// port opening, beside its CPU.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpuTicks, fleet, freePort, loadAverage, portOpen, root, sleep, startService, startSwarm, waitUntil } from './fleet.mjs';

const DB = process.env.FLEET_DB ?? 'pglite';
const COUNT = Number(process.env.FLEET_COUNT ?? 10_000);
const WORKERS = Number(process.env.FLEET_WORKERS ?? 3);
const PARTS = (process.env.FLEET_PARTS ?? 'floor,service').split(',');
const BUDGET_S = 60;
const RATIO_BUDGET = 0.5;
const ALL_TIMEOUT_MS = 600_000;

const log = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** The swarm's counters since `before` (retries and refusals count up for the life of the swarm). */
function since(now, before) {
  const diff = (a, b) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]).filter(([, v]) => v > 0));
  return { retries: now.retries - before.retries, refusals: diff(now.refusals, before.refusals), errors: diff(now.errors, before.errors), failed: now.failed - before.failed };
}

/**
 * Until every device is connected: a timeline (connected and attempts so far, every 250 ms) → { allAt, peak
 * (most connects in one second), stalls }. A stall is a spell of 3 s or more with no connect: with no
 * attempt either, the devices were all waiting out their backoff; with attempts, the broker admitted none.
 */
async function untilAll(swarm, count, t0) {
  const timeline = [];
  let shown = Date.now();
  await waitUntil(
    () => {
      const { connected, retries } = swarm.totals();
      timeline.push([Date.now() - t0, connected, retries]);
      if (Date.now() - shown >= 10_000) {
        shown = Date.now();
        const t = swarm.totals();
        log(`  … ${connected} connected (${s(Date.now() - t0)}), retries ${t.retries}, refusals ${JSON.stringify(t.refusals)}, errors ${JSON.stringify(t.errors)}`);
      }
      return connected >= count;
    },
    ALL_TIMEOUT_MS,
    `all ${count} connected (${swarm.totals().connected})`,
    250,
  );
  let peak = 0;
  for (let i = 0, j = 0; i < timeline.length; i++) {
    while (timeline[i][0] - timeline[j][0] > 1000) j++;
    peak = Math.max(peak, timeline[i][1] - timeline[j][1]);
  }
  return { allAt: Date.now() - t0, peak, timeline, stalls: stallsOf(timeline) };
}

/** Spells of STALL_MS or more in which no device connected: [from ms, to ms, attempts meanwhile]. */
const STALL_MS = 3000;
function stallsOf(timeline) {
  const stalls = [];
  let from = 0;
  for (let i = 1; i < timeline.length; i++) {
    if (timeline[i][1] > timeline[from][1] || i === timeline.length - 1) {
      if (timeline[i - 1][0] - timeline[from][0] >= STALL_MS && timeline[from][1] > 0) stalls.push([timeline[from][0], timeline[i - 1][0], timeline[i - 1][2] - timeline[from][2]]);
      from = i;
    }
  }
  return stalls;
}

/**
 * One broker under the swarm: filled (every device's first connect), then restarted by `restart()` (→ the
 * time its port opened, from the same clock); → the figures of the storm.
 */
async function storm(label, { url, ca, devices, restart, pid }) {
  const count = devices.length;
  const swarm = startSwarm(devices, { url, ca, workers: WORKERS });
  try {
    const tFill = Date.now();
    await swarm.firstDone;
    const fill = await untilAll(swarm, count, tFill);
    const filled = swarm.totals();
    log(`${label}: first connect of ${count} in ${s(fill.allAt)} (${(count / (fill.allAt / 1000)).toFixed(0)}/s), ${filled.failed} gave up, refusals ${JSON.stringify(filled.refusals)}`);
    await sleep(3000);
    const before = swarm.totals();
    const t0 = Date.now();
    const { openAt, newPid, statements } = await restart(t0);
    const cpu0 = newPid ? cpuTicks(newPid) : 0;
    const counted0 = await statements?.();
    const back = await untilAll(swarm, count, t0);
    const cpuS = newPid ? (cpuTicks(newPid) - cpu0) / 100 : NaN;
    const counted = counted0 && (await statements());
    const database = counted
      ? { statementsPerConnect: (counted.statements - counted0.statements) / count, transactionsPerConnect: (counted.transactions - counted0.transactions) / count }
      : {};
    const after = since(swarm.totals(), before);
    const fromOpen = back.allAt - openAt;
    const rate = count / (fromOpen / 1000);
    const cpuMsPerConnect = (cpuS * 1000) / count;
    const figures = { label, count, openAt, allAt: back.allAt, fromOpen, rate, peak: back.peak, cpuS, cpuMsPerConnect, ...database, stalls: back.stalls, ...after, load: loadAverage(), firstRate: count / (fill.allAt / 1000) };
    log(
      `${label}: restart → port open ${s(openAt)}, all ${count} connected again ${s(back.allAt)} after the restart, ${s(fromOpen)} after the port opened: ${rate.toFixed(0)}/s (peak ${back.peak}/s); retries ${after.retries}, refusals ${JSON.stringify(after.refusals)}, errors ${JSON.stringify(after.errors)}, gave up ${after.failed}; service CPU ${cpuS.toFixed(1)} s (${cpuMsPerConnect.toFixed(1)} ms per reconnect, from the port opening); load ${figures.load}`,
    );
    const marks = back.timeline.filter((_, i) => i % 8 === 0).map(([t, c, r]) => `${(t / 1000).toFixed(0)}s:${c}/${r - before.retries}`);
    if (counted) log(`${label}: database statements per reconnect ${database.statementsPerConnect.toFixed(2)}, transactions ${database.transactionsPerConnect.toFixed(2)} (from the port opening)`);
    log(`${label}: timeline (s: connected/attempts since the restart) ${marks.join(' ')}`);
    const stalls = back.stalls.map(([from, to, attempts]) => `${s(from)}–${s(to)} (${attempts} attempts)`);
    log(`${label}: stalls of ${STALL_MS / 1000} s or more with no connect: ${stalls.join(', ') || 'none'}`);
    void pid;
    return figures;
  } finally {
    await swarm.stop();
  }
}

async function floor(f) {
  const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-floor-'));
  try {
    const issued = spawnSync(process.execPath, ['apps/api/dist/keys.js', 'broker-certificate', certDir, '127.0.0.1', 'localhost'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, DATA_DIR: f.dataDir, LOG_LEVEL: 'silent', ...f.env },
    });
    if (issued.status !== 0) throw new Error(`keys.js broker-certificate: ${issued.stderr}`);
    const port = await freePort();
    const start = async () => {
      const child = spawn(process.execPath, [path.join(import.meta.dirname, 'bare-aedes.mjs'), String(port), certDir], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise((resolve, reject) => {
        child.stdout.once('data', resolve);
        child.once('exit', () => reject(new Error('bare-aedes exited')));
      });
      return child;
    };
    let child = await start();
    try {
      const gate = process.env.BARE_MAX_PENDING ? `, at most ${process.env.BARE_MAX_PENDING} handshakes pending` : '';
      return await storm(`floor (bare Aedes, mutual TLS${gate})`, {
        url: `mqtts://127.0.0.1:${port}`,
        ca: f.devices[0].ca,
        devices: f.devices,
        restart: async (t0) => {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await exited;
          child = await start();
          return { openAt: Date.now() - t0, newPid: child.pid };
        },
      });
    } finally {
      child.kill('SIGTERM');
    }
  } finally {
    fs.rmSync(certDir, { recursive: true, force: true });
  }
}

/** The statements and transactions a process loaded with statement-count.mjs has sent so far. */
async function statementsOf(pid, file) {
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  await waitUntil(() => fs.existsSync(file), 30_000, 'the statement count', 10);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

async function service(f) {
  const profileDir = process.env.FLEET_PROFILE;
  const countFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-statements-')), 'count.json');
  const counted = { ...f.env, STATEMENT_COUNT_FILE: countFile };
  let svc = await startService(f.env, { dataDir: f.dataDir });
  const mqttPort = Number(f.env.MQTT_PORT);
  try {
    return await storm(`service (${DB})`, {
      url: f.devices[0].mqttUrl,
      ca: f.devices[0].ca,
      devices: f.devices,
      restart: async (t0) => {
        await svc.stop('SIGTERM');
        log(`service (${DB}): stopped in ${s(Date.now() - t0)}`);
        const nodeArgs = ['--import', pathToFileURL(path.join(import.meta.dirname, 'statement-count.mjs')).href, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
        // On a host loaded enough, a start can exceed Fastify's plugin time-out: it is started again.
        svc = await startService(counted, { dataDir: f.dataDir, nodeArgs }).catch((err) => {
          log(`service (${DB}): start failed (${err.message}), starting again`);
          return startService(counted, { dataDir: f.dataDir, nodeArgs });
        });
        await waitUntil(() => portOpen(mqttPort), 30_000, 'the broker port', 20);
        const { pid } = svc;
        return { openAt: Date.now() - t0, newPid: pid, statements: () => statementsOf(pid, countFile) };
      },
    });
  } finally {
    await svc.stop('SIGTERM');
    fs.rmSync(path.dirname(countFile), { recursive: true, force: true });
  }
}

log(`reconnect storm: ${COUNT} devices on ${DB}, ${WORKERS} client processes, ulimit -n ${spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim()}, load ${loadAverage()}`);
const f = await fleet({ db: DB, count: COUNT, log });
const results = {};
try {
  if (PARTS.includes('floor')) results.floor = await floor(f);
  if (PARTS.includes('service')) results.service = await service(f);
} finally {
  await f.drop();
}
const ours = results.service;
if (ours) {
  const met = ours.fromOpen <= BUDGET_S * 1000 && ours.failed === 0;
  console.log(`\n| metric | value | budget | verdict |\n|---|---|---|---|`);
  console.log(`| ${COUNT} devices back after a restart (${DB}), from the broker's port opening | ${s(ours.fromOpen)} (${s(ours.allAt)} from the restart), ${ours.rate.toFixed(0)}/s, peak ${ours.peak}/s | ≤ ${BUDGET_S} s | ${met ? 'met' : 'NOT met'} |`);
  console.log(`| refused for good · retries · refusals · errors | ${ours.failed} · ${ours.retries} · ${JSON.stringify(ours.refusals)} · ${JSON.stringify(ours.errors)} | none refused for good | ${ours.failed === 0 ? 'met' : 'NOT met'} |`);
  if (results.floor) {
    const ratio = ours.rate / results.floor.rate;
    console.log(`| floor: bare Aedes with mutual TLS | ${s(results.floor.fromOpen)}, ${results.floor.rate.toFixed(0)}/s, peak ${results.floor.peak}/s, retries ${results.floor.retries} | — | — |`);
    console.log(`| connect rate, ours ÷ floor | ${ratio.toFixed(2)}× | ≥ ${RATIO_BUDGET}× | ${ratio >= RATIO_BUDGET ? 'met' : 'NOT met'} |`);
    console.log(`| CPU per reconnect, ours · floor (from the port opening) | ${ours.cpuMsPerConnect.toFixed(1)} ms · ${results.floor.cpuMsPerConnect.toFixed(1)} ms | — | — |`);
  }
  if (ours.statementsPerConnect !== undefined) {
    console.log(`| database statements · transactions per reconnect (from the port opening) | ${ours.statementsPerConnect.toFixed(2)} · ${ours.transactionsPerConnect.toFixed(2)} | — | — |`);
  }
}
console.log(JSON.stringify(results, (k, v) => (k === 'timeline' ? undefined : v)));
