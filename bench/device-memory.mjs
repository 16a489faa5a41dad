#!/usr/bin/env node
// Memory per idle device, apart from any storm: FLEET_COUNT (default 10,000) provisioned devices connect at
// FLEET_RATE a second (default 200) from FLEET_WORKERS client processes (device-swarm.mjs); the service was
// started with --expose-gc and bench/gc-probe.mjs, and is asked by SIGUSR2 to collect its garbage and write
// its memory split. Per device = (with all connected − provisioned and none connected) ÷ N, for RSS, the V8
// heap (used and total), external (of it arrayBuffers: TLS and socket buffers) and the rest (native:
// OpenSSL, libuv, the allocator). Goal ≤ 64 KB. The floor: bare Aedes with mutual TLS (bare-aedes.mjs).
// `node bench/device-memory.mjs`; FLEET_DB=postgres, FLEET_CACHE=<dir> (see reconnect-storm.mjs),
// FLEET_PARTS=floor,service, FLEET_MALLOC_ARENA_MAX=<n> (the service's and the floor's glibc arenas).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuTicks, fleet, freePort, loadAverage, portOpen, root, sleep, startService, startSwarm, waitUntil } from './fleet.mjs';

const DB = process.env.FLEET_DB ?? 'pglite';
const COUNT = Number(process.env.FLEET_COUNT ?? 10_000);
const WORKERS = Number(process.env.FLEET_WORKERS ?? 3);
const RATE = Number(process.env.FLEET_RATE ?? 200);
const PARTS = (process.env.FLEET_PARTS ?? 'floor,service').split(',');
const GOAL_KB = 64;
const ARENAS = process.env.FLEET_MALLOC_ARENA_MAX;
const probeArgs = ['--expose-gc', '--import', path.join(import.meta.dirname, 'gc-probe.mjs')];

const log = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const vmRss = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

/** Until the process uses under 5 % of a core for 3 s running (at most 3 minutes). */
async function quiet(pid) {
  const end = Date.now() + 180_000;
  let calm = 0;
  while (Date.now() < end && calm < 3) {
    const a = cpuTicks(pid);
    await sleep(1000);
    calm = (cpuTicks(pid) - a) / 100 < 0.05 ? calm + 1 : 0;
  }
  return calm >= 3;
}

/** The process collects its garbage and reports: its split, with RSS read from /proc after the collection. */
async function sample(pid, file) {
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const m = await waitUntil(() => fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')), 30_000, 'the gc probe');
  await sleep(500);
  return { ...m, rss: vmRss(pid) };
}

/** Three samples a second apart, each field's median. */
async function memory(pid, file) {
  const xs = [];
  for (let i = 0; i < 3; i++) {
    xs.push(await sample(pid, file));
    await sleep(1000);
  }
  const med = (k) => xs.map((x) => x[k]).sort((a, b) => a - b)[1];
  return Object.fromEntries(['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers', 'mallocedMemory'].map((k) => [k, med(k)]));
}

async function measure(label, { pid, probeFile, url, ca, devices }) {
  const count = devices.length;
  await quiet(pid);
  const before = await memory(pid, probeFile);
  const swarm = startSwarm(devices, { url, ca, workers: WORKERS, rate: RATE });
  try {
    const t = Date.now();
    await swarm.firstDone;
    await waitUntil(() => swarm.totals().connected >= count, 300_000, 'all connected', 250);
    const connectS = (Date.now() - t) / 1000;
    const settled = await quiet(pid);
    const after = await memory(pid, probeFile);
    const totals = swarm.totals();
    const per = (k) => (after[k] - before[k]) / count / 1024;
    const rest = per('rss') - per('heapTotal') - per('external');
    const figures = {
      label,
      count,
      connectS,
      rss: [before.rss, after.rss],
      perDevice: { rss: per('rss'), heapUsed: per('heapUsed'), heapTotal: per('heapTotal'), external: per('external'), arrayBuffers: per('arrayBuffers'), rest },
      retries: totals.retries,
      refusals: totals.refusals,
      settled,
      load: loadAverage(),
    };
    const kb = (v) => `${v.toFixed(1)} KB`;
    log(
      `${label}: ${count} connected at ${RATE}/s in ${connectS.toFixed(1)} s; RSS ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB: ${kb(per('rss'))} a device = heap ${kb(per('heapTotal'))} (used ${kb(per('heapUsed'))}) + external ${kb(per('external'))} (arrayBuffers ${kb(per('arrayBuffers'))}) + rest ${kb(rest)}; retries ${totals.retries}; load ${figures.load}${settled ? '' : '; not quiet'}`,
    );
    return figures;
  } finally {
    await swarm.stop();
  }
}

async function floor(f) {
  const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-floor-'));
  const probeFile = path.join(certDir, 'probe.json');
  let child;
  try {
    const issued = spawnSync(process.execPath, ['apps/api/dist/keys.js', 'broker-certificate', certDir, '127.0.0.1', 'localhost'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, DATA_DIR: f.dataDir, LOG_LEVEL: 'silent', ...f.env },
    });
    if (issued.status !== 0) throw new Error(`keys.js broker-certificate: ${issued.stderr}`);
    const port = await freePort();
    child = spawn(process.execPath, [...probeArgs, path.join(import.meta.dirname, 'bare-aedes.mjs'), String(port), certDir], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, GC_PROBE_FILE: probeFile, ...(ARENAS ? { MALLOC_ARENA_MAX: ARENAS } : {}) },
    });
    await waitUntil(() => portOpen(port), 10_000, 'bare Aedes');
    return await measure('floor (bare Aedes, mutual TLS)', { pid: child.pid, probeFile, url: `mqtts://127.0.0.1:${port}`, ca: f.devices[0].ca, devices: f.devices });
  } finally {
    child?.kill('SIGTERM');
    fs.rmSync(certDir, { recursive: true, force: true });
  }
}

async function service(f) {
  const probeFile = path.join(os.tmpdir(), `latchkey-gc-probe-${process.pid}.json`);
  const env = { ...f.env, GC_PROBE_FILE: probeFile, ...(ARENAS ? { MALLOC_ARENA_MAX: ARENAS } : {}) };
  // On a host loaded enough, a start can exceed Fastify's plugin time-out: it is started again.
  const svc = await startService(env, { dataDir: f.dataDir, nodeArgs: probeArgs }).catch((err) => {
    log(`service: start failed (${err.message}), starting again`);
    return startService(env, { dataDir: f.dataDir, nodeArgs: probeArgs });
  });
  try {
    return await measure(`service (${DB}${ARENAS ? `, MALLOC_ARENA_MAX=${ARENAS}` : ''})`, { pid: svc.pid, probeFile, url: f.devices[0].mqttUrl, ca: f.devices[0].ca, devices: f.devices });
  } finally {
    await svc.stop('SIGTERM');
    fs.rmSync(probeFile, { force: true });
  }
}

log(`memory per idle device: ${COUNT} devices on ${DB} at ${RATE}/s, ${WORKERS} client processes, load ${loadAverage()}`);
const f = await fleet({ db: DB, count: COUNT, log });
const results = {};
try {
  if (PARTS.includes('floor')) results.floor = await floor(f);
  if (PARTS.includes('service')) results.service = await service(f);
} finally {
  await f.drop();
}
if (results.service) {
  const p = results.service.perDevice.rss;
  console.log(`\n| metric | value | budget | verdict |\n|---|---|---|---|`);
  console.log(`| memory per idle device (${DB}), RSS | ${p.toFixed(1)} KB | ≤ ${GOAL_KB} KB | ${p <= GOAL_KB ? 'met' : 'NOT met'} |`);
  if (results.floor) console.log(`| floor: bare Aedes with mutual TLS, RSS | ${results.floor.perDevice.rss.toFixed(1)} KB | — | — |`);
}
console.log(JSON.stringify(results));
