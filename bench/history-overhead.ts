// Issue 19's budget: recording history and enqueueing events adds at most 10 % to the p50 of an
// application update. Run with tsx: `node --import tsx bench/history-overhead.ts` (PGlite; Postgres too
// when BENCH_DATABASE_URL or TEST_DATABASE_URL is set). BENCH_NO_WEBHOOK=1: nothing subscribed.
//
// Both sides run in one service on one database, over HTTP with the same authentication: the real
// `POST /platform/application/{id}` (its UPDATE names the actor; the history trigger writes the history
// entry and queues application.updated for the subscribed webhook, in the same statement) against a
// route registered here that updates the same column the way the service did before issue 19 (one
// UPDATE, nothing else), run while the history trigger is disabled — the table as it was then.
// Sequential requests, rounds paired and alternating (bench/lib.mjs); the ratio of the medians of the
// p50s is checked against 1.10.
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
import { median, paired, scratchDatabase, sequentialLatency } from './lib.mjs';

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
  // The update as it was before issue 19: the same owner check and the same schemas (validation and
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
  const created = await fetch(`${base}/api/platform/application`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench', companyName: 'B', mailingAddress: '1 Road' }) });
  const appId = created.headers.get('location')!.split('/').pop()!;
  const hook = process.env.BENCH_NO_WEBHOOK ? new Response(null, { status: 201 }) : await fetch(`${base}/api/platform/application/${appId}/webhook`, { method: 'POST', headers, body: JSON.stringify({ url: 'https://93.184.215.14/hooks', events: ['application.updated'] }) });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);

  let n = 0;
  const update = (url: string) => async () => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ name: `Bench ${++n}` }) });
    if (res.status !== 204) throw new Error(`${url}: ${res.status}`);
  };
  const withSpine = update(`${base}/api/platform/application/${appId}`);
  const before = update(`${base}/bench/application/${appId}`);
  const historyTrigger = (on: boolean) => database.executeSql(`alter table applications ${on ? 'enable' : 'disable'} trigger applications_history`);
  const pairs = await paired(
    async () => (await historyTrigger(true), sequentialLatency(withSpine, REQUESTS)),
    async () => (await historyTrigger(false), sequentialLatency(before, REQUESTS)),
  );
  await historyTrigger(true);
  const ratios = pairs.map(([a, b]: { p50: number }[]) => a!.p50 / b!.p50);
  const [{ n: entries }] = (await database.executeSql(`select count(*)::int as n from application_changes where application_id = $1`, [appId])).rows as { n: number }[];
  const [{ n: queued }] = (await database.executeSql(`select count(*)::int as n from webhook_deliveries where application_id = $1`, [appId])).rows as { n: number }[];
  await app.close();
  await database.close();
  await scratch?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const ratio = median(ratios) as number;
  const p50 = (i: 0 | 1) => (median(pairs.map((p: { p50: number }[]) => p[i]!.p50)) as number).toFixed(2);
  console.log(
    `${kind.padEnd(8)} update p50 ${p50(0)} ms with history + event, ${p50(1)} ms without → ×${ratio.toFixed(3)} ` +
      `(rounds ${ratios.map((r: number) => r.toFixed(3)).join(', ')}; budget ×${BUDGET}: ${ratio <= BUDGET ? 'met' : 'NOT met'}); ` +
      `${entries} history entries and ${queued} deliveries written`,
  );
  return ratio <= BUDGET;
}

console.log(`History + events overhead on an application update — ${new Date().toISOString()} — ${REQUESTS} sequential requests per round`);
let met = await measure('pglite');
if (adminUrl) met = (await measure('postgres')) && met;
process.exit(met ? 0 : 1);
