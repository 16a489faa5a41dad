// The budget: recording history and enqueueing events adds at most 10 % to the p50 of an
// application update. Run with tsx: `node --import tsx bench/history-overhead.ts` (PGlite; Postgres too
// when BENCH_DATABASE_URL or TEST_DATABASE_URL is set).
//
// Both sides run in one service on one database, over HTTP with the same authentication: the real
// `POST /platform/application/{id}` (its UPDATE names the actor; the history trigger writes the history
// entry and, with a webhook subscribed, the application.updated it owes, in the same statement; the
// relay makes the deliveries and hands them to pg-boss after the commit) against a
// route registered here that updates the same column the way the service did before the change history (one
// UPDATE, nothing else), run while the history trigger is disabled — the table as it was then. Two
// applications: one with a webhook subscribed (history entry and event), one without (history entry).
// BENCH_ROUNDS rounds (default 3) of BENCH_REQUESTS sequential requests per side, the three sides back
// to back in a rotating order; each round's p50 is divided by the same round's baseline and the median
// of those ratios is checked against 1.10. PGlite also reports CPU per update: the database runs in
// this process, so it counts the trigger's and the relay's work, and not the waiting for a busy core.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { applicationIdParamsSchema, updateApplicationSchema } from '@latchkey/contract';
import { buildApp } from '../apps/api/src/app.ts';
import { loadConfig } from '../apps/api/src/config.ts';
import { createDatabase } from '../apps/api/src/db/client.ts';
import { applications } from '../apps/api/src/db/schema.ts';
import { median, ROUNDS, scratchDatabase, sequentialLatency } from './lib.mjs';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const BUDGET = 1.1;
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

async function measure(kind: 'pglite' | 'postgres') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-history-bench-'));
  const scratch = kind === 'postgres' ? await scratchDatabase(adminUrl!) : null;
  const database = await createDatabase({ url: scratch?.url, dataDir: scratch ? undefined : path.join(dataDir, 'pgdata') });
  await database.migrate();
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000000',
    ANONYMOUS_RATE_LIMIT_MAX: '100000000',
    LOGIN_RATE_LIMIT_MAX: '100000000',
    // Deliveries are queued (the relay hands them to pg-boss) but not sent: nothing to call from here.
    WEBHOOK_WORKER: 'false',
  });
  const app = await buildApp(config, { database, logger: false });
  // The update as it was before the change history: the same owner check and the same schemas (validation and
  // serialisation), then one UPDATE of the given column.
  const schema = { params: applicationIdParamsSchema, body: updateApplicationSchema, response: { 204: z.null() } };
  app.post('/bench/application/:applicationId', { onRequest: [app.authenticate, app.requireOwner], schema }, async (request, reply) => {
    const { applicationId } = request.params as { applicationId: string };
    const { name } = request.body as { name: string };
    await app.db
      .update(applications)
      .set({ name, version: sql`${applications.version} + 1`, updatedAt: sql`now()` })
      .where(eq(applications.id, applicationId));
    return reply.code(204).send(null);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  const base = `http://127.0.0.1:${address.port}`;

  const json = { 'content-type': 'application/json' };
  const reg = await fetch(`${base}/api/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email: `bench.${Date.now()}@example.com`, password: 'bench-pass-123' }) });
  const headers = { ...json, authorization: `Bearer ${((await reg.json()) as { authToken: string }).authToken}` };
  const createApp = async (name: string) => {
    const created = await fetch(`${base}/api/platform/application`, { method: 'POST', headers, body: JSON.stringify({ name, companyName: 'B', mailingAddress: '1 Road' }) });
    return created.headers.get('location')!.split('/').pop()!;
  };
  // Two applications: one with a webhook subscribed to application.updated (every update writes a history
  // entry and a delivery, and the relay hands the delivery to pg-boss), one with none (history only).
  const subscribed = await createApp('Subscribed');
  const quiet = await createApp('Quiet');
  const hook = await fetch(`${base}/api/platform/application/${subscribed}/webhook`, { method: 'POST', headers, body: JSON.stringify({ url: 'https://93.184.215.14/hooks', events: ['application.updated'] }) });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);

  let n = 0;
  const update = (url: string) => async () => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ name: `Bench ${++n}` }) });
    if (res.status !== 204) throw new Error(`${url}: ${res.status}`);
  };
  // Before the change history the table had no history trigger: the baseline's rounds run with it disabled.
  const historyTrigger = (on: boolean) => database.executeSql(`alter table applications ${on ? 'enable' : 'disable'} trigger applications_history`);
  const sides = {
    before: { trigger: false, run: update(`${base}/bench/application/${subscribed}`) },
    history: { trigger: true, run: update(`${base}/api/platform/application/${quiet}`) },
    event: { trigger: true, run: update(`${base}/api/platform/application/${subscribed}`) },
  };
  type Side = keyof typeof sides;
  const names = Object.keys(sides) as Side[];
  const p50: Record<Side, number[]> = { before: [], history: [], event: [] };
  const cpu: Record<Side, number[]> = { before: [], history: [], event: [] };
  // One unmeasured pass of each side first: the early rounds ran a third slower (the JIT, PGlite's caches).
  for (const name of names) {
    await historyTrigger(sides[name].trigger);
    await sequentialLatency(sides[name].run, REQUESTS);
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Each round measures the three back to back, in a different order each round.
    for (const name of names.map((_, i) => names[(i + round) % names.length]!)) {
      await historyTrigger(sides[name].trigger);
      const start = process.cpuUsage();
      p50[name].push((await sequentialLatency(sides[name].run, REQUESTS)).p50);
      const used = process.cpuUsage(start);
      cpu[name].push((used.user + used.system) / 1000 / (REQUESTS + Math.min(20, REQUESTS)));
    }
  }
  await historyTrigger(true);
  const { n: entries } = (await database.executeSql(`select count(*)::int as n from application_changes where application_id in ($1, $2)`, [subscribed, quiet])).rows[0] as { n: number };
  // Deliveries the relay has made so far, and events still owed (on the history entries, made into deliveries by the relay).
  const { n: queued } = (
    await database.executeSql(
      `select (select count(*) from webhook_deliveries where application_id = $1) + (select count(*) from application_changes where application_id = $1 and announce is not null) as n`,
      [subscribed],
    )
  ).rows[0] as { n: number };
  await app.close();
  await database.close();
  await scratch?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });

  const m = (xs: number[]) => median(xs) as number;
  let met = true;
  console.log(`${kind}: update p50 without history ${m(p50.before).toFixed(2)} ms (rounds ${p50.before.map((x) => x.toFixed(2)).join(', ')}); ${entries} history entries, ${queued} application.updated events owed or delivered`);
  for (const name of ['history', 'event'] as const) {
    const ratios = p50[name].map((x, i) => x / p50.before[i]!);
    const ratio = m(ratios);
    met &&= ratio <= BUDGET;
    const cpuRatio = m(cpu[name].map((x, i) => x / cpu.before[i]!));
    console.log(
      `  ${name === 'history' ? 'history entry (no webhook)      ' : 'history entry + event queued    '} p50 ${m(p50[name]).toFixed(2)} ms → ×${ratio.toFixed(3)} ` +
        `(rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}; budget ×${BUDGET}: ${ratio <= BUDGET ? 'met' : 'NOT met'})` +
        (kind === 'pglite' ? `; CPU per update ×${cpuRatio.toFixed(3)} (the database runs in-process)` : ''),
    );
  }
  return met;
}

console.log(`History + events overhead on an application update — ${new Date().toISOString()} — ${REQUESTS} sequential requests per round`);
let met = await measure('pglite');
if (adminUrl) met = (await measure('postgres')) && met;
process.exit(met ? 0 : 1);
