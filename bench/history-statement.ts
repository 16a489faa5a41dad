// The application update's statement alone, in-process (no HTTP, no authentication): what the history
// trigger (migrations 0008–0009: the history entry, carrying the application.updated it owes while a
// webhook is subscribed) costs on top of the plain UPDATE as it was before the change history (the same table, the
// trigger disabled).
// `node --import tsx bench/history-statement.ts` (PGlite; Postgres too with BENCH_DATABASE_URL or
// TEST_DATABASE_URL). BENCH_REQUESTS sequential calls per variant and round, BENCH_ROUNDS rounds, the
// variants in a different order each round; medians of the per-round p50s.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { updateWithHistory } from '../apps/api/src/modules/applications/application-update.ts';
import { createDatabase } from '../apps/api/src/db/client.ts';
import { applications, webhooks } from '../apps/api/src/db/schema.ts';
import { median, scratchDatabase, sequentialLatency } from './lib.mjs';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

async function measure(kind: 'pglite' | 'postgres') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-statement-bench-'));
  const scratch = kind === 'postgres' ? await scratchDatabase(adminUrl!) : null;
  const database = await createDatabase({ url: scratch?.url, dataDir: scratch ? undefined : path.join(dataDir, 'pgdata') });
  await database.migrate();
  const db = database.db;
  const insertApp = async (name: string) => (await db.insert(applications).values({ name, companyName: 'B', mailingAddress: '1 Road' }).returning({ id: applications.id }))[0]!.id;
  const quiet = await insertApp('Quiet');
  const subscribed = await insertApp('Subscribed');
  await db.insert(webhooks).values({ applicationId: subscribed, url: 'https://93.184.215.14/hooks', events: ['application.updated'], secret: 'whsec_bench' });
  const by = { id: null, email: 'bench@example.com' };
  const trigger = (on: boolean) => database.executeSql(`alter table applications ${on ? 'enable' : 'disable'} trigger applications_history`);
  let n = 0;
  const plain = (id: string) => () =>
    db.update(applications).set({ name: `Bench ${++n}`, version: sql`${applications.version} + 1`, updatedAt: sql`now()` }).where(eq(applications.id, id));
  const variants: Record<string, { on: boolean; run: () => Promise<unknown> }> = {
    'plain UPDATE (no history trigger)': { on: false, run: plain(quiet) },
    'update + history entry (nothing subscribed)': { on: true, run: () => updateWithHistory(db, quiet, { name: `Bench ${++n}` }, by) },
    'update + history entry owing the event': { on: true, run: () => updateWithHistory(db, subscribed, { name: `Bench ${++n}` }, by) },
  };
  const names = Object.keys(variants);
  const p50s: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      await trigger(variants[name]!.on);
      p50s[name]!.push((await sequentialLatency(variants[name]!.run, REQUESTS)).p50);
    }
  }
  await trigger(true);
  await database.close();
  await scratch?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const base = median(p50s[names[0]!]!) as number;
  console.log(`${kind}:`);
  for (const name of names) {
    const m = median(p50s[name]!) as number;
    console.log(`  ${name.padEnd(46)} p50 ${m.toFixed(3)} ms (rounds ${p50s[name]!.map((x) => x.toFixed(3)).join(', ')}) ×${(m / base).toFixed(3)}`);
  }
}

console.log(`Application update statement — ${new Date().toISOString()} — ${REQUESTS} sequential calls per variant and round, ${ROUNDS} rounds`);
await measure('pglite');
if (adminUrl) await measure('postgres');
