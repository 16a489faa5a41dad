#!/usr/bin/env node
// The authenticated reads against bare Fastify, on the service as it ships: its default log level, rate limits
// and caches. `GET application/{id}` and the list at 64 connections, BENCH_ROUNDS paired rounds (default 5)
// of BENCH_SECONDS each (default 10). PGlite, and PostgreSQL when BENCH_DATABASE_URL or TEST_DATABASE_URL is
// set. Run alone (`node bench/reads.mjs`) or from run.mjs (`BENCH_PARTS=reads`).
//
// Each user may make RATE_LIMIT_MAX requests a minute (600 by default), so no one user can be read at the
// rates measured here: the load is spread over BENCH_READ_USERS users (default 4,000: 40,000 req/s for a
// whole minute), each with an application of their own like seedOwner's. They are seeded through a service
// with lenient limits on the same data, which is then stopped; the measured service is started afresh on it.
// BENCH_READ_RATE_LIMIT_MAX sets the measured service's RATE_LIMIT_MAX instead, so that a few users are enough
// (seeding 4,000 takes minutes): every request is counted against its user the same way whatever the
// maximum, so only the number the count is compared with differs from the service as it ships.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, cpuMsOf, load, median, paired, scratchDatabase, startBareFastify, startService } from './lib.mjs';

export const READ_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const USERS = Number(process.env.BENCH_READ_USERS ?? 4000);
const RATE_LIMIT_MAX = process.env.BENCH_READ_RATE_LIMIT_MAX;
const WARM_UP_SECONDS = 3;
const SEED_CONCURRENCY = 16;

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** `count` users, each with one application (3 CORS domains, 3 issuers) → [{ token, appId }]. */
async function seedReaders(base, count) {
  const readers = new Array(count);
  let next = 0;
  const tag = `${Date.now()}.${Math.random().toString(36).slice(2, 8)}`;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const { body: auth } = await api(base, 'POST', '/auth/register', {
        body: { email: `reader${i}.${tag}@example.com`, password: 'bench-password', displayName: `Reader ${i}` },
      });
      const token = auth.authToken;
      const { res } = await api(base, 'POST', '/platform/application', {
        token,
        body: { name: `Reader app ${i}`, companyName: 'Bench Ltd', mailingAddress: '1 Bench Road' },
      });
      const appId = res.headers.get('location').split('/').pop();
      for (let k = 0; k < 3; k++) {
        await api(base, 'POST', `/platform/application/${appId}/cors`, { token, body: { url: `https://app${k}.example.com` } });
        await api(base, 'POST', `/platform/application/${appId}/auth/issuer`, { token, body: { url: `https://issuer${k}.${appId}.example.com` } });
      }
      readers[i] = { token, appId };
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return readers;
}

/** `run` (a load) with the CPU time process `pid` spent serving it, per request answered (µs). */
export function withCpu(pid, run) {
  return async () => {
    const before = cpuMsOf(pid);
    const r = await run();
    return { ...r, cpuUs: ((cpuMsOf(pid) - before) * 1000) / Math.max(1, r.total) };
  };
}

/**
 * The reads of one database (`env`: the service's, e.g. DATABASE_URL) paired with `loadBare`'s rounds; each
 * figure goes to `row(section, metric, value, budget, verdict)`. `nodeArgs`: for the measured service
 * (e.g. `--cpu-prof`). `bare`: the yardstick's process, whose CPU time per request is set against the service's.
 * → { get, list }: each round's { rps, p50, p99, ratio, cpuUs, bareCpuUs, load, non2xx, errors }.
 */
export async function benchReads({ name, env = {}, bare, loadBare, row, rounds = READ_ROUNDS, duration = DURATION, users = USERS, nodeArgs = [] }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-reads-'));
  const results = {};
  try {
    const seeding = await startService(env, { dataDir });
    const t = Date.now();
    let readers;
    try {
      readers = await seedReaders(seeding.url, users);
    } finally {
      await seeding.stop();
    }
    row(name, `seed ${users} readers`, `${((Date.now() - t) / 1000).toFixed(0)} s`);
    const svc = await startService(RATE_LIMIT_MAX ? { ...env, RATE_LIMIT_MAX } : env, { dataDir, shipped: true, nodeArgs });
    try {
      const auth = (token) => ({ authorization: `Bearer ${token}` });
      const reads = [
        ['get', 'GET application/{id}', readers.map((r) => ({ method: 'GET', path: `/api/platform/application/${r.appId}`, headers: auth(r.token) }))],
        ['list', 'GET application (list)', readers.map((r) => ({ method: 'GET', path: '/api/platform/application', headers: auth(r.token) }))],
      ];
      for (const [key, label, requests] of reads) {
        const ours = withCpu(svc.pid, () => load({ url: svc.url, requests, duration }).then((r) => ({ ...r, load: loadAverage() })));
        await load({ url: svc.url, requests, duration: WARM_UP_SECONDS });
        const pairs = await paired(withCpu(bare.pid, loadBare), ours, rounds);
        // Only answered reads count: a 429 is cheap, and counting it would flatter the ratio.
        const answered = (r) => (r.total ? (r.rps * Math.max(0, r.total - r.non2xx)) / r.total : 0);
        const each = pairs.map(([b, r]) => ({ ...r, rps: answered(r), bare: b.rps, bareCpuUs: b.cpuUs, ratio: answered(r) / b.rps }));
        results[key] = each;
        const failed = each.reduce((n, r) => n + r.non2xx + r.errors, 0);
        // 429s mean too few readers for this rate (BENCH_READ_USERS × RATE_LIMIT_MAX a minute): the round
        // did not measure reads alone.
        if (failed) row(name, `${label} errors`, `${failed} non-2xx or errors (${JSON.stringify(each.map((r) => r.statusCodes))})`, 'none', 'NOT met');
        const ratio = median(each.map((r) => r.ratio));
        const p99 = median(each.map((r) => r.p99));
        row(
          name,
          `${label} req/s (× bare), shipped`,
          `${median(each.map((r) => r.rps)).toFixed(0)} (${ratio.toFixed(2)}×; rounds ${each.map((r) => r.ratio.toFixed(2)).join(' ')})`,
          '≥ 0.5× (0.52× clear)',
          ratio >= 0.52 ? 'met' : ratio >= 0.5 ? 'met, not clearly' : 'NOT met',
        );
        row(
          name,
          `${label} p50 · p99 @64`,
          `${median(each.map((r) => r.p50)).toFixed(2)} ms · ${p99.toFixed(2)} ms (worst round ${Math.max(...each.map((r) => r.p99)).toFixed(2)} ms)`,
          'p99 ≤ 15 ms',
          p99 <= 15 ? 'met' : 'NOT met',
        );
        row(name, `${label} load average per round`, each.map((r) => r.load.split(' ')[0]).join(' '));
        // Service CPU per request against bare Fastify's: what the code costs, whatever else the host runs.
        const cpuRatio = median(each.map((r) => r.bareCpuUs / r.cpuUs));
        row(
          name,
          `${label} CPU µs per request (bare · ours)`,
          `${median(each.map((r) => r.bareCpuUs)).toFixed(1)} · ${median(each.map((r) => r.cpuUs)).toFixed(1)} (bare ÷ ours ${cpuRatio.toFixed(2)}×)`,
        );
      }
    } finally {
      await svc.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.filename === process.argv[1]) {
  const pgAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const only = process.env.BENCH_READ_DATABASES?.split(',');
  const rows = [];
  const row = (section, metric, value, budget = '', verdict = '') => {
    rows.push({ section, metric, value, budget, verdict });
    console.log(`  ${section} · ${metric}: ${value}${budget ? `  (budget ${budget}: ${verdict})` : ''}`);
  };
  console.log(`Reads — ${new Date().toISOString()} — ${os.cpus().length} cores, Node ${process.version}, load ${loadAverage()}`);
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const bare = await startBareFastify();
  try {
    await load({ url: bare.url, duration: WARM_UP_SECONDS });
    const loadBare = () => load({ url: bare.url, duration: DURATION });
    for (const name of ['pglite', 'postgres']) {
      if (only && !only.includes(name)) continue;
      if (name === 'postgres' && !pgAdminUrl) continue;
      const scratch = name === 'postgres' ? await scratchDatabase(pgAdminUrl) : null;
      try {
        await benchReads({ name, env: scratch ? { DATABASE_URL: scratch.url } : {}, bare, loadBare, row, nodeArgs });
      } finally {
        await scratch?.drop();
      }
    }
  } finally {
    await bare.stop();
  }
  console.log(`load average at the end: ${loadAverage()}`);
  console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.section} | ${r.metric} | ${r.value} | ${r.budget} | ${r.verdict} |`);
}
