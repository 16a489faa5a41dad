// Two (or INSTANCES) instances of the service on one database, for the sandbox benchmarks (bench/sandbox.mjs).
// Run with tsx. Each instance is its own Fastify with its own pool and its own LISTEN connection; they share
// one process because PGlite cannot be opened by two (on Postgres the notices cross the server either way).
// Prints one JSON line {urls}, then obeys lines on stdin:
//   seed <lockId> <applicationId> <count>  → inserts that many log entries, one every 30 s back in time,
//                                            in batches, with the change-notice trigger off; answers "seeded"
//   quit                                   → closes everything and exits
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { sql } from 'drizzle-orm';
import { buildApp } from '../apps/api/src/app.ts';
import { loadConfig } from '../apps/api/src/config.ts';
import { createDatabase, type Database } from '../apps/api/src/db/client.ts';

const url = process.env.BENCH_DB_URL || undefined;
const count = Number(process.env.INSTANCES ?? 2);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-sandbox-bench-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  HOST: '127.0.0.1',
  RATE_LIMIT_MAX: '100000000',
  ANONYMOUS_RATE_LIMIT_MAX: '100000000',
  LOGIN_RATE_LIMIT_MAX: '100000000',
});

const first = await createDatabase({ url, dataDir: url ? undefined : path.join(dataDir, 'pgdata') });
await first.migrate();
const databases: Database[] = [first];
const apps = [];
const urls: string[] = [];
for (let i = 0; i < count; i++) {
  const database = i === 0 || !url ? first : await createDatabase({ url });
  if (database !== first) databases.push(database);
  const app = await buildApp(config, { database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  apps.push(app);
  urls.push(`http://127.0.0.1:${address.port}`);
}
console.log(JSON.stringify({ urls }));

const BATCH = 100_000;
async function seed(lockId: string, applicationId: string, total: number) {
  const db = first.db;
  await db.execute(sql`alter table lock_activity disable trigger lock_activity_notify_insert`);
  try {
    for (let from = 0; from < total; from += BATCH) {
      const to = Math.min(total, from + BATCH) - 1;
      await db.execute(sql`
        insert into lock_activity (lock_id, application_id, at, type, actor_email, rejected, reason)
        select ${lockId}::uuid, ${applicationId}::uuid, now() - make_interval(secs => i * 30),
               (array['UNLOCK','LOCK','SHARE','REVOKE','SETTINGS'])[1 + i % 5], 'bench@example.com', i % 7 = 0,
               case when i % 7 = 0 then 'Outside the time window' end
        from generate_series(${from}::int, ${to}::int) as i`);
    }
  } finally {
    await db.execute(sql`alter table lock_activity enable trigger lock_activity_notify_insert`);
  }
  // Fresh statistics, and the bulk load's dirty pages written out now rather than by the first reads.
  await db.execute(sql`analyze lock_activity`);
  await db.execute(sql`checkpoint`);
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  const [command, ...args] = line.trim().split(' ');
  if (command === 'seed') {
    await seed(args[0]!, args[1]!, Number(args[2]));
    console.log('seeded');
  } else if (command === 'quit') break;
}
for (const app of apps) await app.close();
for (const database of databases) await database.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
