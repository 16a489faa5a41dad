// The activity export's figures: rows/s while 1,000,000 log entries stream as CSV over HTTP into a counting
// sink (budget ≥ 50,000 rows/s), and the service's memory during the export against before it, for 100,000
// and 1,000,000 entries (the growth must not scale with the rows). PGlite, and PostgreSQL when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set. Run with tsx from apps/api:
//   cd apps/api && node --import tsx ../../bench/activity-export.ts
// (run.mjs runs it as part of `npm run bench`, BENCH_PARTS=export). Every figure is printed in one run; each
// table row also as a `ROW [section, metric, value, budget, verdict]` line, which run.mjs collects.
//
// The service runs in a child process (this file with --serve): what is sampled there, every 5 ms, is the
// service's own RSS and V8 heap, not the client's. With PGlite the database runs in the service too, so its
// memory is in that RSS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import readline from 'node:readline';
import { sql } from 'drizzle-orm';
import type { Db } from '../apps/api/src/db/client.ts';
import { api, scratchDatabase, seedOwner } from './lib.mjs';

const BIG = Number(process.env.EXPORT_ROWS ?? 1_000_000);
const SMALL = Math.round(BIG / 10);
const BUDGET_ROWS_PER_S = 50_000;
const MB = 1024 * 1024;

if (process.argv.includes('--serve')) await serve();
else await main();

interface Memory {
  rss: number;
  heap: number;
  peakRss: number;
  peakHeap: number;
  /** The service's CPU time (user + system) from mark to peak, in seconds: the database's too with PGlite. */
  cpu: number;
  /** The highest RSS in each quarter of the export's time: growth that scaled with the rows would climb quarter by quarter. */
  rssByQuarter: number[];
  /** The service's event loop delay during the export (ms): how long another request could have waited for it. */
  loopDelayMax: number;
  loopDelayP99: number;
  samples: number;
}

/** The service (and its database when PGlite), driven over stdin/stdout. */
async function serve() {
  const { buildApp } = await import('../apps/api/src/app.ts');
  const { loadConfig } = await import('../apps/api/src/config.ts');
  const { createDatabase } = await import('../apps/api/src/db/client.ts');
  const url = process.env.BENCH_DB_URL || undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-export-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', HOST: '127.0.0.1', RATE_LIMIT_MAX: '100000000', ANONYMOUS_RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000000' });
  const database = await createDatabase({ url, dataDir: url ? undefined : path.join(dataDir, 'pgdata') });
  await database.migrate();
  const app = await buildApp(config, { database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));

  let sampler: NodeJS.Timeout | null = null;
  let memory: Memory | null = null;
  let cpuAtMark = process.cpuUsage();
  let samples: [number, number][] = [];
  let loopDelay = monitorEventLoopDelay({ resolution: 5 });
  const sample = () => {
    const m = process.memoryUsage();
    memory!.peakRss = Math.max(memory!.peakRss, m.rss);
    samples.push([performance.now(), m.rss]);
    memory!.peakHeap = Math.max(memory!.peakHeap, m.heapUsed);
  };
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [command, ...args] = line.trim().split(' ');
    if (command === 'seed') {
      await seed(database.db, args[0]!, args[1]!, Number(args[2]));
      console.log('seeded');
    } else if (command === 'mark') {
      // The baseline: after a full collection, so it is what the service holds, not garbage not yet collected.
      globalThis.gc?.();
      const m = process.memoryUsage();
      memory = { rss: m.rss, heap: m.heapUsed, peakRss: m.rss, peakHeap: m.heapUsed, cpu: 0, rssByQuarter: [], loopDelayMax: 0, loopDelayP99: 0, samples: 0 };
      samples = [];
      loopDelay = monitorEventLoopDelay({ resolution: 5 });
      loopDelay.enable();
      cpuAtMark = process.cpuUsage();
      sampler = setInterval(sample, 5);
      console.log('marked');
    } else if (command === 'peak') {
      clearInterval(sampler!);
      sample();
      const cpu = process.cpuUsage(cpuAtMark);
      memory!.cpu = (cpu.user + cpu.system) / 1e6;
      loopDelay.disable();
      memory!.loopDelayMax = loopDelay.max / 1e6;
      memory!.loopDelayP99 = loopDelay.percentile(99) / 1e6;
      memory!.samples = samples.length;
      const [first, last] = [samples[0]![0], samples.at(-1)![0]];
      memory!.rssByQuarter = [0, 1, 2, 3].map((q) =>
        Math.max(...samples.filter(([t]) => Math.min(3, Math.floor(((t - first) / Math.max(last - first, 1)) * 4)) === q).map(([, rss]) => rss), 0),
      );
      console.log(JSON.stringify(memory));
    } else if (command === 'quit') break;
  }
  await app.close();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

/**
 * `total` entries for one lock, one every 3 s back from now, with generate_series in statements of 100,000
 * rows (the change-notice trigger off meanwhile). Every column the export writes is filled on some rows:
 * actors, refusals with reasons, device entries with a method, an access code and a value, and a subject
 * with a comma and quotes (so the quoting path runs) on every 10th.
 */
async function seed(db: Db, lockId: string, applicationId: string, total: number) {
  const BATCH = 100_000;
  await db.execute(sql`alter table lock_activity disable trigger lock_activity_notify_insert`);
  try {
    for (let from = 0; from < total; from += BATCH) {
      const to = Math.min(total, from + BATCH) - 1;
      await db.execute(sql`
        insert into lock_activity (lock_id, application_id, at, type, actor_user_id, actor_email, actor_display_name, subject,
                                   rejected, reason, repeats, method, access_code_id, source, offline, value)
        select ${lockId}::uuid, ${applicationId}::uuid, now() - make_interval(secs => i * 3),
               (array['UNLOCK','LOCK','ACCESS_CODE','BATTERY','SHARE'])[1 + i % 5],
               case when i % 5 in (0, 1, 4) then '00000000-0000-4000-8000-000000000001'::uuid end,
               case when i % 5 in (0, 1, 4) then 'resident' || (i % 1000) || '@example.com' end,
               case when i % 5 in (0, 1, 4) then 'Resident ' || (i % 1000) end,
               case when i % 10 = 4 then 'Flat ' || (i % 90) || ', "north" wing' end,
               i % 7 = 0, case when i % 7 = 0 then 'Outside the time window' end, 1 + (i % 7 = 0)::int,
               (array['mobile_key', null, 'access_code', null, null])[1 + i % 5],
               case when i % 5 = 2 then '00000000-0000-4000-8000-000000000002'::uuid end,
               case when i % 5 in (2, 3) then 'device' else 'platform' end,
               i % 50 = 2,
               case when i % 5 = 3 then i % 101 end
        from generate_series(${from}::int, ${to}::int) as i`);
    }
  } finally {
    await db.execute(sql`alter table lock_activity enable trigger lock_activity_notify_insert`);
  }
  await db.execute(sql`analyze lock_activity`);
  await db.execute(sql`checkpoint`);
}

function startServer(dbUrl: string | undefined) {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--serve'], {
    cwd: path.join(import.meta.dirname, '../apps/api'),
    env: { PATH: process.env.PATH, BENCH_DB_URL: dbUrl ?? '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => (await lines.next()).value as string;
  const say = async (line: string, answer?: string) => {
    child.stdin!.write(`${line}\n`);
    const got = await next();
    if (answer && got !== answer) throw new Error(`${line}: ${got}`);
    return got;
  };
  return {
    ready: next().then((l) => (JSON.parse(l) as { url: string }).url),
    seed: (lockId: string, appId: string, n: number) => say(`seed ${lockId} ${appId} ${n}`, 'seeded'),
    mark: () => say('mark', 'marked'),
    peak: async () => JSON.parse(await say('peak')) as Memory,
    stop: async () => {
      child.stdin!.write('quit\n');
      await new Promise((r) => child.on('exit', r));
    },
  };
}

/** The export read over HTTP as fast as it comes, counting bytes and records (no field holds a line break). */
async function exportOnce(url: string, token: string) {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok || !res.body) throw new Error(`export ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  return { rows: lines - 1, bytes, seconds };
}

async function measure(name: string, dbUrl: string | undefined, row: (...cells: string[]) => void) {
  const server = startServer(dbUrl);
  try {
    const base = await server.ready;
    const owner = await seedOwner(base, 'export');
    const lockBase = `/platform/application/${owner.appId}/lock`;
    const small = (await api(base, 'POST', lockBase, { token: owner.token, body: { name: 'Export small' } })).body as { id: string };
    const big = (await api(base, 'POST', lockBase, { token: owner.token, body: { name: 'Export big' } })).body as { id: string };
    let t = performance.now();
    await server.seed(small.id, owner.appId, SMALL);
    await server.seed(big.id, owner.appId, BIG);
    row(name, `seed ${(SMALL + BIG).toLocaleString('en')} entries (generate_series)`, `${((performance.now() - t) / 1000).toFixed(1)} s`);
    const lockUrl = (id: string) => `${base}/api${lockBase}/${id}/log.csv`;
    // Warm: the route, the statements and the JIT, on the small lock (not measured).
    await exportOnce(lockUrl(small.id), owner.token);
    const results: Record<string, { rows: number; bytes: number; seconds: number; memory: Memory }> = {};
    for (const [label, url, expected] of [
      ['100k', lockUrl(small.id), SMALL],
      ['1M', lockUrl(big.id), BIG],
      ['application', `${base}/api/platform/application/${owner.appId}/log.csv`, SMALL + BIG],
    ] as const) {
      await server.mark();
      t = performance.now();
      const r = await exportOnce(url, owner.token);
      const memory = await server.peak();
      if (r.rows !== expected) throw new Error(`${label}: ${r.rows} rows, expected ${expected}`);
      results[label] = { ...r, memory };
    }
    const fmt = (r: (typeof results)[string]) =>
      `${Math.round(r.rows / r.seconds).toLocaleString('en')} rows/s (${r.rows.toLocaleString('en')} rows, ${(r.bytes / MB).toFixed(0)} MB in ${r.seconds.toFixed(1)} s; the service's CPU ${r.memory.cpu.toFixed(1)} s: ${Math.round(r.rows / r.memory.cpu).toLocaleString('en')} rows per CPU-second)`;
    const growth = (r: (typeof results)[string]) =>
      `RSS ${(r.memory.rss / MB).toFixed(0)} → peak ${(r.memory.peakRss / MB).toFixed(0)} MB (+${((r.memory.peakRss - r.memory.rss) / MB).toFixed(1)}), heap used ${(r.memory.heap / MB).toFixed(0)} → peak ${(r.memory.peakHeap / MB).toFixed(0)} MB (+${((r.memory.peakHeap - r.memory.heap) / MB).toFixed(1)}); RSS peak by quarter of the export ${r.memory.rssByQuarter.map((v) => (v ? (v / MB).toFixed(0) : '–')).join(' · ')} MB (${r.memory.samples} samples); event loop delay p99 ${r.memory.loopDelayP99.toFixed(0)} ms, max ${r.memory.loopDelayMax.toFixed(0)} ms`;
    const bigRate = results['1M']!.rows / results['1M']!.seconds;
    row(name, `lock export, ${BIG.toLocaleString('en')} entries → counting sink over HTTP`, fmt(results['1M']!), `≥ ${BUDGET_ROWS_PER_S.toLocaleString('en')} rows/s`, bigRate >= BUDGET_ROWS_PER_S ? 'met' : 'NOT met');
    row(name, `lock export, ${SMALL.toLocaleString('en')} entries`, fmt(results['100k']!));
    row(name, `application export (join for lock names), ${(SMALL + BIG).toLocaleString('en')} entries`, fmt(results.application!));
    const sizes = { '100k': `lock export, ${SMALL.toLocaleString('en')}`, '1M': `lock export, ${BIG.toLocaleString('en')}`, application: `application export, ${(SMALL + BIG).toLocaleString('en')}` };
    for (const label of ['100k', '1M', 'application'] as const) row(name, `service memory during the ${sizes[label]} entries vs before`, growth(results[label]!));
    // Flat: ten times the rows may add no more than 16 MB to the growth (an export held in memory would add
    // about what it sends: over 100 MB here).
    const grew = (label: string, k: 'Rss' | 'Heap') => {
      const m = results[label]!.memory;
      return Math.max((k === 'Rss' ? m.peakRss - m.rss : m.peakHeap - m.heap) / MB, 0);
    };
    for (const k of ['Rss', 'Heap'] as const) {
      const more = grew('1M', k) - grew('100k', k);
      row(name, `${k === 'Rss' ? 'RSS' : 'heap used'} growth, ${BIG.toLocaleString('en')} vs ${SMALL.toLocaleString('en')} entries (${(results['1M']!.bytes / MB).toFixed(0)} vs ${(results['100k']!.bytes / MB).toFixed(0)} MB sent)`, `+${grew('1M', k).toFixed(1)} vs +${grew('100k', k).toFixed(1)} MB`, 'flat: ≤ 16 MB more', more <= 16 ? 'met' : 'NOT met');
    }
  } finally {
    await server.stop();
  }
}

async function main() {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) ?? [])[1] ?? 'unknown CPU';
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`Activity export — ${new Date().toISOString()} — ${cpu}, ${os.cpus().length} cores, Node ${process.version}, load ${load()}`);
  const rows: string[][] = [];
  const row = (...cells: string[]) => {
    rows.push(cells);
    console.log(`ROW ${JSON.stringify(cells)}`);
  };
  await measure('pglite', undefined, row);
  if (adminUrl) {
    const scratch = await scratchDatabase(adminUrl);
    try {
      await measure('postgres', scratch.url, row);
    } finally {
      await scratch.drop();
    }
  }
  console.log(`load average at the end: ${load()}`);
  console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${[...r, '', ''].slice(0, 5).join(' | ')} |`);
}
