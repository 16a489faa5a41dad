#!/usr/bin/env node
// The sandbox's figures: an activity page at 1M entries against 1k, and how soon a change made
// on one instance reaches a server-sent-events client of another. PGlite, and Postgres when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set. Run alone (`node bench/sandbox.mjs`) or from run.mjs.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { TextDecoder } from 'node:util';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { api, load, median, percentile, root, scratchDatabase, seedOwner } from './lib.mjs';

const SMALL = 1_000;
const BIG = 1_000_000;
const LIVE_UPDATES = Number(process.env.BENCH_LIVE_UPDATES ?? 300);

/** The instances harness (bench/sandbox-instances.ts) as a child process, driven over stdin/stdout. */
async function startInstances(dbUrl) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/sandbox-instances.ts')], {
    cwd: path.join(root, 'apps/api'),
    env: { PATH: process.env.PATH, BENCH_DB_URL: dbUrl ?? '', INSTANCES: '2' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value;
  const { urls } = JSON.parse(await next());
  return {
    urls,
    seed: async (lockId, appId, n) => {
      child.stdin.write(`seed ${lockId} ${appId} ${n}\n`);
      if ((await next()) !== 'seeded') throw new Error('seeding failed');
    },
    stop: async () => {
      child.stdin.write('quit\n');
      await new Promise((r) => child.on('exit', r));
    },
  };
}

/** A server-sent-events client reading with fetch, as the portal does; resolves waiters on matching events. */
async function sseClient(url, token) {
  const controller = new globalThis.AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (!res.ok) throw new Error(`SSE ${res.status}`);
  const waiters = new Set();
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const at = performance.now();
          for (const w of waiters) {
            if (!block.includes(w.text)) continue;
            waiters.delete(w);
            w.resolve(at);
          }
        }
      }
    } catch {
      /* closed */
    }
  })();
  return {
    next: (text, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const w = { text, resolve };
        waiters.add(w);
        setTimeout(() => waiters.delete(w) && reject(new Error(`no event with ${text}`)), timeoutMs);
      }),
    close: () => controller.abort(),
  };
}


/**
 * Runs both figures on one database kind and reports them through `row(section, metric, value, budget, verdict)`.
 * The page ratio is taken from paired, alternating rounds (this host's speed drifts; see run.mjs).
 */
export async function runSandboxBenches({ row, name, dbUrl, duration = 5, rounds = 3 }) {
  const ms = (v) => `${v.toFixed(2)} ms`;
  const ok = (b) => (b ? 'met' : 'NOT met');
  const inst = await startInstances(dbUrl);
  try {
    const [one, two] = inst.urls;
    const owner = await seedOwner(one, 'sandbox');
    const headers = { authorization: `Bearer ${owner.token}` };
    const lockBase = `/platform/application/${owner.appId}/lock`;
    const small = (await api(one, 'POST', lockBase, { token: owner.token, body: { name: 'Small log' } })).body;
    const big = (await api(one, 'POST', lockBase, { token: owner.token, body: { name: 'Big log' } })).body;
    const page = (lock, query = '') => `${one}/api${lockBase}/${lock.id}/log${query}`;

    // 1. The activity page. First alone with 1k entries, then paired with the 1M-entry lock's page.
    await inst.seed(small.id, owner.appId, SMALL);
    await load({ url: page(small), headers, connections: 16, duration: 2 });
    const alone = await load({ url: page(small), headers, connections: 16, duration });
    let t = Date.now();
    await inst.seed(big.id, owner.appId, BIG);
    row(name, `seed ${BIG.toLocaleString('en')} log entries`, `${((Date.now() - t) / 1000).toFixed(1)} s`);
    await load({ url: page(big), headers, connections: 16, duration: 2 });
    const pairs = [];
    for (let i = 0; i < rounds; i++) {
      const a = () => load({ url: page(small), headers, connections: 16, duration });
      const b = () => load({ url: page(big), headers, connections: 16, duration });
      if (i % 2 === 0) pairs.push([await a(), await b()]);
      else {
        const y = await b();
        pairs.push([await a(), y]);
      }
    }
    const failed = pairs.flat().reduce((n, r) => n + r.non2xx + r.errors, 0);
    if (failed) row(name, 'activity page errors', `${failed} non-2xx or errors`);
    const ratio = median(pairs.map(([s, b]) => s.rps / b.rps));
    row(name, `activity page (50) @16: ${SMALL.toLocaleString('en')} entries alone`, `${alone.rps.toFixed(0)} req/s · p50 ${ms(alone.p50)} · p99 ${ms(alone.p99)}`);
    row(
      name,
      `activity page @16: ${BIG.toLocaleString('en')} vs ${SMALL.toLocaleString('en')} entries (time per page, × 1k)`,
      `${median(pairs.map(([, b]) => b.rps)).toFixed(0)} vs ${median(pairs.map(([s]) => s.rps)).toFixed(0)} req/s · p99 ${ms(median(pairs.map(([, b]) => b.p99)))} vs ${ms(median(pairs.map(([s]) => s.p99)))} (${ratio.toFixed(2)}×)`,
      '≤ 1.2×',
      ok(ratio <= 1.2),
    );
    // Deep in the log: a time filter 300 days back, and the page after page 1 (the cursor).
    const deepEnd = Math.floor(Date.now() / 1000) - 300 * 86_400;
    const deep = await load({ url: page(big, `?end=${deepEnd}`), headers, connections: 16, duration });
    const first = (await api(one, 'GET', `${lockBase}/${big.id}/log`, { token: owner.token })).body;
    const second = await load({ url: page(big, `?cursor=${first.nextCursor}`), headers, connections: 16, duration });
    row(name, `activity page @16, ${BIG.toLocaleString('en')} entries: 300 days back (end filter) · page 2 (cursor)`, `${deep.rps.toFixed(0)} · ${second.rps.toFixed(0)} req/s; p99 ${ms(deep.p99)} · ${ms(second.p99)}`);

    // 2. Live update: rename the Front Door on instance one; time until instance two's SSE client has it.
    const locks = (await api(one, 'GET', lockBase, { token: owner.token })).body;
    const door = locks.find((l) => l.name === 'Front Door');
    const client = await sseClient(`${two}/api${lockBase}/events`, owner.token);
    const times = [];
    for (let i = 0; i < LIVE_UPDATES + 20; i++) {
      const label = `Front Door ${i}-${randomUUID().slice(0, 6)}`;
      const arrived = client.next(`"name":"${label}"`);
      const start = performance.now();
      await api(one, 'PUT', `${lockBase}/${door.id}`, { token: owner.token, body: { name: label } });
      const at = await arrived;
      if (i >= 20) times.push(at - start);
      await new Promise((r) => setTimeout(r, 5));
    }
    client.close();
    times.sort((a, b) => a - b);
    const p99 = percentile(times, 99);
    row(name, `live update → second instance's SSE client (${times.length} renames)`, `p50 ${ms(percentile(times, 50))} · p99 ${ms(p99)} · max ${ms(times.at(-1))}`, 'p99 ≤ 250 ms', ok(p99 <= 250));
  } finally {
    await inst.stop();
  }
}

// Alone: print each figure and a Markdown table at the end.
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = [];
  const row = (section, metric, value, budget = '', verdict = '') => {
    rows.push({ section, metric, value, budget, verdict });
    console.log(`  ${section} · ${metric}: ${value}${budget ? `  (budget ${budget}: ${verdict})` : ''}`);
  };
  const duration = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  console.log(`Sandbox benchmarks — ${new Date().toISOString()}\n`);
  await runSandboxBenches({ row, name: 'pglite', duration, rounds });
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const scratch = await scratchDatabase(adminUrl);
    try {
      await runSandboxBenches({ row, name: 'postgres', dbUrl: scratch.url, duration, rounds });
    } finally {
      await scratch.drop();
    }
  }
  console.log('\n| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.section} | ${r.metric} | ${r.value} | ${r.budget} | ${r.verdict} |`);
}
