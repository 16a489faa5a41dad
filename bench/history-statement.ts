// The application update's statement alone, in-process (no HTTP, no authentication): what recording
// history and queueing application.updated cost on top of the plain UPDATE, and what the form without
// the event insert (application-update.ts, AnnouncementHints) saves when no webhook is subscribed.
// `node --import tsx bench/history-statement.ts` (PGlite; Postgres too with BENCH_DATABASE_URL or
// TEST_DATABASE_URL). BENCH_REQUESTS sequential calls per variant and round, BENCH_ROUNDS rounds, the
// variants in a different order each round; medians of the per-round p50s.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { AnnouncementHints, updateWithHistory } from '../apps/api/src/modules/applications/application-update.ts';
import { createDatabase } from '../apps/api/src/db/client.ts';
import { applications } from '../apps/api/src/db/schema.ts';
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
  const [row] = await db.insert(applications).values({ name: 'Bench', companyName: 'B', mailingAddress: '1 Road' }).returning({ id: applications.id });
  const appId = row!.id;
  const by = { id: null, email: 'bench@example.com' };
  let n = 0;
  const hints = new AnnouncementHints();
  const variants: Record<string, () => Promise<unknown>> = {
    'plain UPDATE (before issue 19)': () =>
      db.update(applications).set({ name: `Bench ${++n}`, version: sql`${applications.version} + 1`, updatedAt: sql`now()` }).where(eq(applications.id, appId)),
    'history + event insert (full form, self-join)': () => updateWithHistory(db, appId, { name: `Bench ${++n}` }, by),
    'history, guarded, no event insert (hinted form)': () => updateWithHistory(db, appId, { name: `Bench ${++n}` }, by, { hints }),
    ...(kind === 'pglite'
      ? { 'hinted form, RETURNING old (PG 18)': () => updateWithHistory(db, appId, { name: `Bench ${++n}` }, by, { hints, returningOld: true }) }
      : {}),
  };
  const names = Object.keys(variants);
  const p50s = new Map<string, number[]>(names.map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) p50s.get(name)!.push((await sequentialLatency(variants[name]!, REQUESTS)).p50);
  }
  const [{ n: queued }] = (await database.executeSql(`select count(*)::int as n from webhook_deliveries`, [])).rows as { n: number }[];
  await database.close();
  await scratch?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const plain = median(p50s.get(names[0]!)!) as number;
  for (const name of names) {
    const values = p50s.get(name)!;
    const m = median(values) as number;
    console.log(`${kind.padEnd(8)} ${name.padEnd(48)} p50 ${m.toFixed(3)} ms (rounds ${values.map((v) => v.toFixed(3)).join(', ')}) ×${(m / plain).toFixed(2)} of plain`);
  }
  if (queued !== 0) throw new Error(`no webhook is subscribed, yet ${queued} deliveries were written`);
}

console.log(`Application update statement alone — ${new Date().toISOString()} — ${REQUESTS} sequential calls × ${ROUNDS} rounds, load ${os.loadavg()[0]!.toFixed(1)}`);
await measure('pglite');
if (adminUrl) await measure('postgres');
