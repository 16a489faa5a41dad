// Shared pieces of the benchmarks: start the built service or a bare Fastify as real processes, measure
// with autocannon, and talk to the API over HTTP like any client.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';

export const root = path.resolve(import.meta.dirname, '..');

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Until `url` answers 2xx (or `status`). */
export async function waitFor(url, timeoutMs = 60_000, status = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok || res.status === status) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The built service as a real process; by default silent, with generous rate limits, so the benchmark measures
 * the work, not the limiter.
 * `dataDir`: a data directory the caller keeps (it is not removed on stop), e.g. to start the service on it twice.
 * `shipped`: the service as it ships — its default log level (info) and rate limits; only where it listens
 * (its port, no MQTT port, which several benches on one host would fight over) and the drain on SIGTERM
 * are the bench's. `nodeArgs`: flags for node (e.g. `--cpu-prof`). `entry`: another build of the service
 * (BENCH_SERVICE_ENTRY, e.g. a branch's build beside dist/, to set two builds against each other in one run).
 * → { url, pid, dataDir, stop }.
 */
export async function startService(env = {}, { dataDir: given, shipped = false, nodeArgs = [], entry = process.env.BENCH_SERVICE_ENTRY ?? 'apps/api/dist/main.js' } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-bench-'));
  const quiet = shipped
    ? {}
    : { LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000', ANONYMOUS_RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000000' };
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
      MQTT_PORT: '0',
      // The bench stops its services often: no readiness drain on SIGTERM.
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...quiet,
      ...env,
    },
    // The shipped service logs at info to stdout: its lines are not the bench's output.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // A first start on a busy host (the embedded database made, migrations run) can take minutes.
  await waitFor(`${url}/api/ready`, 300_000);
  return {
    url,
    pid: child.pid,
    dataDir,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.on('exit', r));
      }
      if (!given) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startBareFastify() {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'bare-fastify.mjs'), String(port)], {
    cwd: path.join(root, 'apps/api'),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url);
  return { url, pid: child.pid, stop: async () => { child.kill('SIGTERM'); await new Promise((r) => child.on('exit', r)); } };
}

/** CPU time (user + system, ms) process `pid` has used so far, from /proc (Linux). */
export function cpuMsOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/**
 * autocannon run at a fixed concurrency → { rps, total, p50, p99, errors, non2xx, statusCodes, cpuMs }. It runs in a
 * process of its own (bench/load-worker.mjs), so the generator never shares an event loop with the bench
 * that started it; `requests` may list plain requests (method, path, headers, body) every connection takes
 * in turn. A `requests` entry with a function (autocannon's `setupRequest`, e.g. giving each request its
 * own body) cannot cross to another process: that run stays in this one.
 * Throughput is autocannon's; p50 and p99 come from every 2xx answer's own time, which autocannon measures
 * to the microsecond but keeps in a histogram of whole milliseconds (a p99 of "3 ms" could be anything from
 * 3.0 to 3.99, a third either way in a ratio of two such figures).
 */
export function load({ url, connections = 64, duration = 10, headers = {}, method = 'GET', body, requests }) {
  const options = { url, connections, duration, headers, method, body, requests };
  if (requests?.some((r) => Object.values(r).some((v) => typeof v === 'function'))) return loadHere(options);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'load-worker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load worker exited with ${code}`));
      const r = JSON.parse(out);
      resolve({ ...r, p50: r.p50 ?? NaN, p99: r.p99 ?? NaN });
    });
    child.stdin.end(JSON.stringify(options));
  });
}

/** load() in this process: for requests built by a function. */
function loadHere({ url, connections, duration, headers, method, body, requests }) {
  let times = new Float64Array(1 << 20);
  let count = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections, duration, headers, method, body, requests, pipelining: 1 }, (err, r) => {
      if (err) return reject(err);
      const sorted = times.subarray(0, count).sort();
      const at = (p) => (count ? Number(percentile(sorted, p).toFixed(2)) : NaN);
      resolve({ rps: r.requests.average, total: r.requests.total, p50: at(50), p99: at(99), errors: r.errors, non2xx: r.non2xx, statusCodes: r.statusCodeStats });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode < 200 || statusCode > 299) return;
      if (count === times.length) {
        const grown = new Float64Array(times.length * 2);
        grown.set(times);
        times = grown;
      }
      times[count++] = responseTimeMs;
    });
  });
}

export async function api(base, method, p, { token, body } = {}) {
  const res = await fetch(`${base}/api${p}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text}`);
  return { res, body: text ? JSON.parse(text) : null };
}

/** Registers a user and creates one realistic application (keys, issuers, CORS domains). */
export async function seedOwner(base, label = 'bench') {
  const email = `${label}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = 'bench-password';
  const { body: auth } = await api(base, 'POST', '/auth/register', { body: { email, password, displayName: 'Bench' } });
  const { res } = await api(base, 'POST', '/platform/application', {
    token: auth.authToken,
    body: { name: 'Bench app', companyName: 'Bench Ltd', mailingAddress: '1 Bench Road' },
  });
  const appId = res.headers.get('location')?.split('/').pop();
  if (!appId) throw new Error('POST /platform/application answered without a Location');
  for (let i = 0; i < 3; i++) {
    await api(base, 'POST', `/platform/application/${appId}/cors`, { token: auth.authToken, body: { url: `https://app${i}.example.com` } });
    await api(base, 'POST', `/platform/application/${appId}/auth/issuer`, { token: auth.authToken, body: { url: `https://issuer${i}.${appId}.example.com` } });
  }
  return { email, password, token: auth.authToken, appId };
}

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/**
 * `a` and `b` measured back to back, ROUNDS times, the order alternating (ab, ba, ab …) → [[a, b], …].
 * A ratio of two figures is only as good as the host was steady between them; this host's speed drifts
 * by a third within minutes (bare Fastify: 39.5k and 51.5k req/s in two runs ten minutes apart), so each
 * ratio is taken within a pair and the median of the pairs is what the budget is checked against.
 */
export async function paired(a, b, rounds = ROUNDS) {
  const pairs = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      const x = await a();
      pairs.push([x, await b()]);
    } else {
      const y = await b();
      pairs.push([await a(), y]);
    }
  }
  return pairs;
}

export const median = (xs) => percentile([...xs].sort((a, b) => a - b), 50);

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Sequential latency of one request, warm: p50 and p99 in ms. */
export async function sequentialLatency(fn, n) {
  for (let i = 0; i < Math.min(20, n); i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** A fresh database on the PostgreSQL server at `adminUrl` (one the bench may create databases on), and its drop. */
export async function scratchDatabase(adminUrl) {
  const name = `latchkey_bench_${randomUUID().replace(/-/g, '')}`;
  const run = async (q) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  await run(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
