import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import { buildApp, type BuildOptions } from '../src/app.js';
import { loadConfig, type Env } from '../src/config.js';
import { createDatabase, type Database } from '../src/db/client.js';
import { provided, scratchPostgres } from './fixtures/scratch-database.js';

/**
 * Which real database the API tests run on: PGlite in-process, or — in the second Vitest project, when
 * TEST_DATABASE_URL is set — a fresh database on that PostgreSQL server per test file.
 */
export const testDbKind = process.env.TEST_DB_KIND === 'postgres' ? 'postgres' : 'pglite';

/** The migrated PGlite data directory test/global-setup.ts dumped, read once per test file. */
let pgliteTemplate: Promise<Blob | undefined> | undefined;

function loadPgliteTemplate(): Promise<Blob | undefined> {
  pgliteTemplate ??= (async () => {
    const file = provided('pgliteTemplate');
    return file ? new Blob([await fs.promises.readFile(file)]) : undefined;
  })();
  return pgliteTemplate;
}

/**
 * A migrated database of its own: a copy of the one test/global-setup.ts migrated (PGlite loads its dump,
 * PostgreSQL creates the database from its template), or — without that set-up — migrated here. For a
 * test that builds its service itself; `drop()` after the database is closed.
 */
export async function createTestDatabase(): Promise<{ database: Database; url?: string; drop: () => Promise<void> }> {
  if (testDbKind === 'pglite') {
    const template = await loadPgliteTemplate();
    const database = await createDatabase({ loadDataDir: template });
    if (!template) await database.migrate();
    return { database, drop: async () => {} };
  }
  if (!process.env.TEST_DATABASE_URL) throw new Error('TEST_DB_KIND=postgres needs TEST_DATABASE_URL');
  const { url, drop } = await scratchPostgres('latchkey_test', { migrated: true });
  const database = await createDatabase({ url, poolSize: 5 });
  if (!provided('postgresTemplate')) await database.migrate();
  return { database, url, drop };
}

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  dataDir: string;
  /** Another instance of the service on the same database (its own pool and change feed on Postgres). */
  secondInstance: () => Promise<{ app: FastifyInstance; close: () => Promise<void> }>;
  close: () => Promise<void>;
}

/** A real app on a real, freshly migrated database. Call close() in afterAll. */
export async function createTestApp(env: Env = {}, build: Pick<BuildOptions, 'cors' | 'downloadsDir'> = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://localhost:3000',
    RATE_LIMIT_MAX: '100000',
    ANONYMOUS_RATE_LIMIT_MAX: '100000',
    DIRECTORY_RATE_LIMIT_MAX: '100000',
    CERTIFICATE_RATE_LIMIT_MAX: '100000',
    LOGIN_RATE_LIMIT_MAX: '100000',
    REFUSED_OPERATION_RATE_LIMIT_MAX: '100000',
    ...env,
  });
  const { database, url, drop } = await createTestDatabase();
  const app = await buildApp(config, { ...build, database, logger: false });
  await app.ready();
  return {
    app,
    database,
    dataDir,
    secondInstance: async () => {
      // PGlite lives in one process, so a second instance there shares it; on Postgres it connects anew.
      const second = url ? await createDatabase({ url, poolSize: 5 }) : database;
      const other = await buildApp(config, { ...build, database: second, logger: false });
      await other.ready();
      return {
        app: other,
        close: async () => {
          await other.close();
          if (second !== database) await second.close();
        },
      };
    },
    close: async () => {
      await app.close();
      await database.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `check` every 10 ms until it holds or `ms` have passed; true if it held. For what another
 * instance learns asynchronously (the database's change notices). `ms` is a cap for what never comes,
 * not a budget: it returns as soon as the check holds, so it is generous enough for a loaded CI host.
 */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Runs `check` with the clock `ms` ahead, for what expires by the wall clock (a signed URL, a key's `exp`):
 * the expiry is checked without waiting for it. Only Date moves, and it keeps running from there; timers,
 * sockets and the database keep real time. Real time is back when `check` ends, however it ends.
 */
export async function later<T>(ms: number, check: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ms, shouldAdvanceTime: true });
  try {
    return await check();
  } finally {
    vi.useRealTimers();
  }
}

let counter = 0;
/** A unique address per call so tests in one file never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}.${counter}.${randomUUID().slice(0, 8)}@example.com`;
}
