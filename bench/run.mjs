#!/usr/bin/env node
// `npm run bench`: every performance budget's figure in one run on this machine, printed as one table with ratios.
// Needs the build (it runs `npm run build` when dist/ is missing). Postgres rows need BENCH_DATABASE_URL or
// TEST_DATABASE_URL (a server where we may create a scratch database).
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { meetsBudget, runLighthouse, seedFinishedOwner } from './lighthouse.mjs';
import { benchDevices } from './devices.mjs';
import { benchSignedUnlock } from './signed-unlock.mjs';
import { runSandboxBenches } from './sandbox.mjs';
import { benchReads } from './reads.mjs';
import { ROUNDS, api, load, median, paired, root, scratchDatabase, seedOwner, sequentialLatency, startBareFastify, startService } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const pgAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
// BENCH_PARTS=reads,login measures only those parts (all when unset): a short run on a shared machine.
const parts = new Set((process.env.BENCH_PARTS ?? 'reads,login,preview,scale,devices,offline,codes,door,export,lighthouse,bundle').split(','));
const rows = [];
const row = (section, metric, value, budget = '', verdict = '') => {
  rows.push({ section, metric, value, budget, verdict });
  console.log(`  ${section} · ${metric}: ${value}${budget ? `  (budget ${budget}: ${verdict})` : ''}`);
};
const ms = (v) => `${v.toFixed(2)} ms`;
const ok = (b) => (b ? 'met' : 'NOT met');
const spread = (xs, unit = '×') => (xs.length > 1 ? `; rounds ${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}${unit}` : '');

if (!fs.existsSync(path.join(root, 'apps/api/dist/main.js')) || !fs.existsSync(path.join(root, 'apps/web/dist/index.html'))) {
  execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
}


console.log(`Latchkey benchmarks — ${new Date().toISOString()} — ${os()}\n`);
function os() {
  const cpus = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) ?? [])[1] ?? 'unknown CPU';
  return `${process.platform}, ${cpus}, ${(fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm) ?? []).length} cores, Node ${process.version}`;
}

// 1. Bare Fastify yardstick, up for the whole run: each read round is paired with a round of it.
const bare = await startBareFastify();
// Every measured server is warmed up first (JIT, connection pools), so each ratio compares steady states.
const WARM_UP_SECONDS = 3;
await load({ url: bare.url, duration: WARM_UP_SECONDS });
const bareRuns = [];
const loadBare = async () => {
  const r = await load({ url: bare.url, duration: DURATION });
  bareRuns.push(r);
  return r;
};

const modes = [{ name: 'pglite', env: {} }];
if (pgAdminUrl) modes.push({ name: 'postgres', env: null });

try {
  for (const mode of modes) {
    let scratch = null;
    if (mode.name === 'postgres') {
      scratch = await scratchDatabase(pgAdminUrl);
      mode.env = { DATABASE_URL: scratch.url };
    }
    // 1. Authenticated reads vs bare Fastify, on the service as it ships (bench/reads.mjs: its own services).
    if (parts.has('reads')) await benchReads({ name: mode.name, env: mode.env, bare, loadBare, row });
    const svc = await startService(mode.env);
    try {
      const owner = await seedOwner(svc.url);
      const headers = { authorization: `Bearer ${owner.token}` };
      // 2. Login cost at the configured argon2id parameters, and reads while 20 logins/s are in flight.
      const login = () => api(svc.url, 'POST', '/auth/token', { body: { email: owner.email, password: owner.password } });
      if (parts.has('login')) await measureLogin();
      async function measureLogin() {
      const loginLatency = await sequentialLatency(login, 40);
      row(mode.name, 'login p50 (sequential)', ms(loginLatency.p50), '≤ 60 ms', ok(loginLatency.p50 <= 60));
      const loginRun = await load({
        url: `${svc.url}/api/auth/token`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: owner.email, password: owner.password }),
        connections: 8,
        duration: Math.min(DURATION, 5),
      });
      row(mode.name, 'login throughput @8', `${loginRun.rps.toFixed(1)} logins/s`);
      const readUrl = `${svc.url}/api/platform/application/${owner.appId}`;
      const idle = () => load({ url: readUrl, headers, duration: DURATION });
      const busy = async () => {
        let stop = false;
        const loginLoop = (async () => {
          const pending = [];
          while (!stop) {
            pending.push(login().catch(() => {}));
            await new Promise((r) => setTimeout(r, 50)); // 20/s
          }
          await Promise.all(pending);
        })();
        const r = await load({ url: readUrl, headers, duration: DURATION });
        stop = true;
        await loginLoop;
        return r;
      };
      const rounds = await paired(idle, busy);
      const factors = rounds.map(([i, b]) => b.p99 / Math.max(i.p99, 1));
      const factor = median(factors);
      row(
        mode.name,
        'read p99 idle → with 20 logins/s',
        `${ms(median(rounds.map(([i]) => i.p99)))} → ${ms(median(rounds.map(([, b]) => b.p99)))} (${factor.toFixed(2)}×${spread(factors)})`,
        '≤ 2×',
        ok(factor <= 2),
      );
      }

      // 3. Email preview, warm.
      if (parts.has('preview')) await measurePreview();
      async function measurePreview() {
      const previewUrl = `${svc.url}/api/email/preview/${owner.appId}?primaryColour=%23112233&ctaHeadline=Hello`;
      // The overrides are answered to a signed-in owner only, as the portal asks.
      const preview = await sequentialLatency(async () => {
        const r = await fetch(previewUrl, { headers });
        if (!r.ok) throw new Error(`preview ${r.status}`);
        await r.text();
      }, 300);
      row(mode.name, 'email preview p50 · p99 (warm)', `${ms(preview.p50)} · ${ms(preview.p99)}`, 'p50 ≤ 5 ms', ok(preview.p50 <= 5));
      }
    } finally {
      await svc.stop();
    }

    // 5. Scale: the same reads with 100 rows, then with 100,000 users and 300,000 applications seeded.
    if (!parts.has('scale')) {
      await scratch?.drop();
      continue;
    }
    const SCALE_CONNECTIONS = 8;
    // Without the access cache (ACCESS_CACHE=false), so every read runs its statements: what is measured
    // is the database's part, which is what table size could change.
    const svc2 = await startService({ ...(mode.env ?? {}), ACCESS_CACHE: 'false' });
    try {
      const owner = await seedOwner(svc2.url, 'scale');
      const headers = { authorization: `Bearer ${owner.token}` };
      for (const p of [`/platform/application/${owner.appId}`, '/platform/application']) {
        await load({ url: `${svc2.url}/api${p}`, headers, duration: WARM_UP_SECONDS, connections: SCALE_CONNECTIONS });
      }
      // req/s of the get and the list, ROUNDS rounds of each taking turns, median of each.
      const scaleReads = async () => {
        const rps = { get: [], list: [] };
        for (let i = 0; i < ROUNDS; i++) {
          for (const [k, p] of [['get', `/platform/application/${owner.appId}`], ['list', '/platform/application']]) {
            rps[k].push((await load({ url: `${svc2.url}/api${p}`, headers, duration: Math.min(DURATION, 5), connections: SCALE_CONNECTIONS })).rps);
          }
        }
        return { get: median(rps.get), list: median(rps.list) };
      };
      const small = await scaleReads();
      const seeded = await seedBulk(mode.name === 'postgres' ? mode.env.DATABASE_URL : null);
      if (seeded) {
        const big = await scaleReads();
        // Mean latency by Little's law (connections ÷ req/s): autocannon records latencies in whole
        // milliseconds, too coarse for sub-millisecond reads; its request count is exact.
        const meanMs = (rps) => (SCALE_CONNECTIONS / rps) * 1000;
        for (const k of ['get', 'list']) {
          const f = meanMs(big[k]) / meanMs(small[k]);
          row(mode.name, `${k} mean latency, uncached · 100 rows → 300k apps`, `${meanMs(small[k]).toFixed(2)} ms → ${meanMs(big[k]).toFixed(2)} ms (${f.toFixed(2)}×)`, '≤ 1.2×', ok(f <= 1.2));
        }
      } else {
        row(mode.name, 'scale seed', 'skipped: PGlite is single-process (seeded only through Postgres)');
      }
    } finally {
      await svc2.stop();
      await scratch?.drop();
    }
  }
  // 6. Signed unlocks, paired with the same bare yardstick.
  for (const [section, metric, value, budget, verdict] of await benchSignedUnlock({ loadBare })) row(section, metric, value, budget, verdict);
} finally {
  await bare.stop();
}
{
  const m = (k) => median(bareRuns.map((r) => r[k]));
  const bareRow = { section: 'bare fastify', metric: `req/s · p50 · p99 @64 (median of ${bareRuns.length} rounds)`, value: `${m('rps').toFixed(0)} · ${ms(m('p50'))} · ${ms(m('p99'))}`, budget: '', verdict: '' };
  rows.unshift(bareRow);
  console.log(`  ${bareRow.section} · ${bareRow.metric}: ${bareRow.value}`);
}

/** 100,000 users and 300,000 applications (3 per user, each with an owner row) in plain SQL. */
async function seedBulk(databaseUrl) {
  if (!databaseUrl) return false;
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const t = Date.now();
  await c.query(`insert into users (id, email, display_name) select gen_random_uuid(), 'seed' || g || '@example.com', 'Seed ' || g from generate_series(1, 100000) g`);
  await c.query(`insert into applications (id, name, company_name, mailing_address) select gen_random_uuid(), 'App ' || g, 'Co', 'Road' from generate_series(1, 300000) g`);
  await c.query(`insert into application_owners (application_id, user_id)
    select a.id, u.id from (select id, row_number() over () as n from applications) a
    join (select id, row_number() over () as n from users where email like 'seed%') u on u.n = ((a.n - 1) % 100000) + 1`);
  await c.query('analyze');
  await c.end();
  row('seed', '100k users + 300k applications', `${((Date.now() - t) / 1000).toFixed(1)} s`);
  return true;
}

// 5. The sandbox: an activity page at 1M entries against 1k, and a live update reaching a second
// instance's SSE client (bench/sandbox.mjs).
for (const mode of modes) {
  const scratch = mode.name === 'postgres' ? await scratchDatabase(pgAdminUrl) : null;
  try {
    await runSandboxBenches({ row, name: mode.name, dbUrl: scratch?.url, duration: Math.min(DURATION, 5), rounds: ROUNDS });
  } finally {
    await scratch?.drop();
  }
}

// 7. Locks that connect over MQTT (bench/devices.mjs): an unlock through a device on the embedded broker and
// on Mosquitto 2, and many idle devices connected at once (DEVICES_COUNT, default 10,000).
if (parts.has('devices')) {
  try {
    for (const [section, metric, value, budget, verdict] of await benchDevices()) row(`devices · ${section}`, metric, value, budget, verdict);
  } catch (err) {
    row('devices', 'run', `failed: ${err.message.split('\n')[0]}`);
  }
}

// 7b. The door without the cloud (bench/offline-grace.ts, in its own process): the cost of re-signing
// 10,000 device configs, and a revocation's way from the API's 204 to a connected door refusing the user.
if (parts.has('offline')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/offline-grace.ts')], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const found = run.stdout.split('\n').filter((line) => line.startsWith('ROW '));
  for (const line of found) row(...JSON.parse(line.slice(4)));
  if (found.length === 0) row('offline grace', 'run', `failed: ${(run.stderr || run.stdout).trim().split('\n').pop()}`);
}

// 7c. Access codes and door events (bench/access-codes.ts, in its own process): the keypad's check with
// 1,000 online codes, a code created through the API until a connected device has it (`set`), and a code
// typed at a connected door until the portal's live stream carries it.
if (parts.has('codes')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/access-codes.ts')], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const found = run.stdout.split('\n').filter((line) => line.startsWith('ROW '));
  for (const line of found) row(...JSON.parse(line.slice(4)));
  if (found.length === 0 || run.status !== 0) row('codes', 'run', `failed: ${(run.stderr || run.stdout).trim().split('\n').pop()}`);
}

// 7d. The door without the cloud, end to end (bench/door-without-cloud.ts, in its own process): 10,000 events a
// device decided offline, delivered after it reconnects (events/s, none lost or doubled), and a revocation's
// way to the door's refusal with 1,000 devices online; with PostgreSQL, a crashed instance's devices offline.
if (parts.has('door')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/door-without-cloud.ts')], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const found = run.stdout.split('\n').filter((line) => line.startsWith('ROW '));
  for (const line of found) row(...JSON.parse(line.slice(4)));
  if (found.length === 0 || run.status !== 0) row('door without the cloud', 'run', `failed: ${(run.stderr || run.stdout).trim().split('\n').pop()}`);
  // A crashed instance's devices shown offline: two service processes on one PostgreSQL database.
  if (pgAdminUrl) {
    const crash = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/instance-crash.ts')], { cwd: root, encoding: 'utf8', env: { ...process.env, TEST_DATABASE_URL: pgAdminUrl }, maxBuffer: 64 * 1024 * 1024 });
    const rowsFound = crash.stdout.split('\n').filter((line) => line.startsWith('ROW '));
    for (const line of rowsFound) row(...JSON.parse(line.slice(4)));
    if (rowsFound.length === 0 || crash.status !== 0) row('door without the cloud', 'crash run', `failed: ${(crash.stderr || crash.stdout).trim().split('\n').pop()}`);
  }
}

// 8. The activity export as CSV (bench/activity-export.ts, in its own process): rows/s, and the service's
// memory during the export against before, at 100,000 and 1,000,000 entries.
if (parts.has('export')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/activity-export.ts')], { cwd: path.join(root, 'apps/api'), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const found = run.stdout.split('\n').filter((line) => line.startsWith('ROW '));
  for (const line of found) {
    const [section, metric, value, budget = '', verdict = ''] = JSON.parse(line.slice(4));
    row(`export · ${section}`, metric, value, budget, verdict);
  }
  if (found.length === 0 || run.status !== 0) row('export', 'run', `failed: ${(run.stderr || run.stdout).trim().split('\n').pop()}`);
}

// 4b. Lighthouse on the embedded service.
if (parts.has('lighthouse')) {
  const svc = await startService();
  try {
    const owner = await seedFinishedOwner(svc.url);
    for (const r of await runLighthouse({ base: svc.url, ...owner, formFactors: ['desktop', 'mobile'] })) {
      const met = meetsBudget(r);
      row('lighthouse', `${r.route.replace(owner.appId, ':appId')} ${r.formFactor} perf · a11y`, `${r.performance} · ${r.accessibility}`, 'perf ≥ 95, a11y 100', ok(met));
    }
  } catch (err) {
    row('lighthouse', 'run', `failed: ${err.message.split('\n')[0]}`);
  } finally {
    await svc.stop();
  }
}

// 4. Web: what each route loads first (gzip), from the build manifest.
if (parts.has('bundle')) {
  const sizes = spawnSync(process.execPath, [path.join(root, 'bench/bundle-size.mjs')], { encoding: 'utf8' });
  console.log(`\n${sizes.stdout}${sizes.stderr}`);
}

console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.section} | ${r.metric} | ${r.value} | ${r.budget} | ${r.verdict} |`);
