import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  migrate(): Promise<void>;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  /**
   * LISTEN on `channel` for as long as the returned stop() is not called. `up` is called once the
   * subscription is in place, `down` when it is lost (Postgres reconnects by itself and calls `up` again);
   * notifications sent while it was down are not replayed, so `down` must forget what they would have said.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  /**
   * Plain SQL outside drizzle (the job queue's own statements, pg-boss's `db` adapter). Text with no
   * parameters may hold several statements.
   */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** The connection pool as it is now (metrics): PGlite is one in-process connection. */
  poolStats(): { max: number; total: number; idle: number; waiting: number };
  /** PGlite only: its data directory as a gzipped tarball, taken between two statements (backup.ts). */
  dumpDataDir?(): Promise<Blob>;
  /** NOTIFY on `channel`, outside any transaction. */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface ListenHandlers {
  message(payload: string): void;
  up(): void;
  down(): void;
}

/**
 * How many rows an UPDATE or DELETE without RETURNING touched: PGlite answers `affectedRows`, node-postgres
 * `rowCount`. Cheaper than RETURNING, whose rows drizzle decodes and maps (about 0.1 ms a statement on
 * PGlite, bench/history-statement.ts).
 */
export function affectedRows(result: unknown): number {
  const r = result as { affectedRows?: number; rowCount?: number | null };
  return r.affectedRows ?? r.rowCount ?? 0;
}

/** Any number distinct from other advisory locks; held while migrations run so instances take turns. */
const MIGRATION_LOCK_ID = 727_274_001;

/** drizzle/ sits beside src/ and dist/; walk up from this file so both the sources and the bundle find it. */
function migrationsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'drizzle');
    if (fs.existsSync(path.join(candidate, 'meta', '_journal.json'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('Migrations folder (drizzle/) not found');
}

/** How many migrations this build knows (drizzle/meta/_journal.json): a backup made by a newer one has more. */
export function knownMigrations(): number {
  const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  return journal.entries.length;
}

export interface DatabaseOptions {
  /** postgres:// URL; without it the embedded PGlite is used. */
  url?: string;
  /** PGlite data directory; undefined = in memory (tests). */
  dataDir?: string;
  poolSize?: number;
  /**
   * PGlite only: start from this data directory (a tarball as dumpDataDir() gives it) instead of an empty
   * cluster. The tests load one migrated database this way rather than migrating each afresh.
   */
  loadDataDir?: Blob;
}

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) return createPostgres(options.url, options.poolSize ?? 10);
  return createPglite(options.dataDir, options.loadDataDir);
}

async function createPglite(dataDir: string | undefined, loadDataDir: Blob | undefined): Promise<Database> {
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
  const client = loadDataDir ? new PGlite({ dataDir, loadDataDir }) : new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    migrate: () => migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: migrationsFolder() }),
    ping: async () => {
      await client.query('select 1');
    },
    // In-process: a notification is handed over while the statement that caused it completes.
    listen: async (channel, handlers) => {
      const stop = await client.listen(channel, handlers.message);
      handlers.up();
      return stop;
    },
    executeSql: async (text, values) => {
      if (values && values.length > 0) return client.query(text, values);
      // Several statements (pg-boss's BEGIN … COMMIT blocks): every statement's rows, as node-postgres's
      // array of results gives them to pg-boss, so a RETURNING before the COMMIT is not lost. A failure
      // inside such a block leaves this one connection in an aborted transaction: roll it back.
      try {
        return { rows: (await client.exec(text)).flatMap((result) => result.rows) };
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
    },
    notify: async (channel, payload) => {
      await client.query('select pg_notify($1, $2)', [channel, payload]);
    },
    poolStats: () => ({ max: 1, total: 1, idle: 1, waiting: 0 }),
    dumpDataDir: async () => {
      await client.exec('checkpoint');
      return client.dumpDataDir('gzip');
    },
    close: () => client.close(),
  };
}

async function createPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 2000,
    // Fail fast instead of queueing forever when Postgres is gone; the error handler answers 503.
    query_timeout: 10_000,
  });
  // An idle client losing its connection must not crash the process (Postgres restarts, failovers).
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    migrate: async () => {
      const lockClient = await pool.connect();
      try {
        await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        await migratePg(drizzlePg(pool, { schema }), { migrationsFolder: migrationsFolder() });
      } finally {
        await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        lockClient.release();
      }
    },
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    listen: (channel, handlers) => listenPostgres(url, channel, handlers),
    executeSql: (text, values) => pool.query(text, values),
    notify: async (channel, payload) => {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    poolStats: () => ({ max: poolSize, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  };
}

/**
 * A dedicated connection (a pooled one would be handed to queries) that LISTENs and, when it is lost,
 * reconnects after 0.5 s, doubling up to 30 s.
 */
async function listenPostgres(url: string, channel: string, handlers: ListenHandlers): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | undefined;
  let delay = 500;

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (client === c) client = null;
      c.end().catch(() => {});
      handlers.down();
      if (!stopped) {
        timer = setTimeout(() => void connect().catch(() => {}), delay);
        delay = Math.min(delay * 2, 30_000);
      }
    };
    c.on('error', onLost);
    c.on('end', onLost);
    c.on('notification', (n) => {
      if (n.channel === channel) handlers.message(n.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      onLost();
      throw err;
    }
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    delay = 500;
    handlers.up();
  };

  // The first connection may fail (Postgres still starting): the service still starts, without the cache.
  await connect().catch(() => {});
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const c = client;
    client = null;
    if (c) {
      c.removeAllListeners('end');
      c.removeAllListeners('error');
      c.on('error', () => {});
      await c.end().catch(() => {});
    }
  };
}
