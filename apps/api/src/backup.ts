import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { knownMigrations, type Database } from './db/client.js';
import { bearerMatches } from './lib/bearer-token.js';
import { countClearSecrets, describeClearSecrets, type Sql } from './lib/clear-secrets.js';

/**
 * Backups that restore (docs/decisions/0011-backups.md).
 *
 * A backup file is one header line, one JSON line and the payload:
 *
 *     LATCHKEY-BACKUP 1
 *     {"kind":"pglite"|"postgres","migrations":12,"createdAt":"…","bytes":…,"sha256":"…"}
 *     <payload: PGlite's data directory as a .tar.gz, or pg_dump's custom format>
 *
 * Restore reads and checks all of it — the header, the payload's length and hash (a truncated or damaged
 * file), the schema (a backup from a newer build than this one) — and only then changes anything.
 *
 * The embedded database is held by the running service (PGlite is in its process), so a backup is asked of
 * the service over a Unix socket in DATA_DIR (`admin.sock`, the owner's only: whoever may read DATA_DIR
 * may read the database anyway), which copies the data directory between two statements. With no
 * service running, the CLI opens the directory itself. PostgreSQL is dumped with pg_dump. The metrics port's
 * POST /admin/backup serves the same copy to the METRICS_TOKEN bearer only (registerAdminRoutes).
 */
const MAGIC = 'LATCHKEY-BACKUP 1';
export const ADMIN_SOCKET = 'admin.sock';

export interface BackupHeader {
  kind: 'pglite' | 'postgres';
  migrations: number;
  createdAt: string;
  bytes: number;
  sha256: string;
}

export class BackupRefused extends Error {}

export interface BackupOptions {
  /**
   * Write the backup even though the database holds secrets in clear (stored while SECRETS_ENCRYPTION_KEY
   * was not set): `npm run backup -- FILE --allow-clear-secrets`, `POST /admin/backup?allow-clear-secrets=true`.
   */
  allowClearSecrets?: boolean;
}

/** The query parameter and CLI flag that ask for a backup holding clear secrets. */
export const ALLOW_CLEAR_SECRETS = 'allow-clear-secrets';

/**
 * Refuses a backup that would hold the CA private keys, the signing keys and the webhook secrets in clear
 * — readable by anyone who gets the file, wherever it is copied — unless asked explicitly.
 */
async function refuseClearSecrets(sql: Sql, options: BackupOptions): Promise<void> {
  if (options.allowClearSecrets) return;
  const clear = await countClearSecrets(sql);
  if (clear.total === 0) return;
  throw new BackupRefused(
    `The database holds ${describeClearSecrets(clear)} in clear (stored while SECRETS_ENCRYPTION_KEY was not set): a backup would carry them readable by anyone who gets the file. ` +
      `Set SECRETS_ENCRYPTION_KEY and restart the service (it seals them), then back up — or, to write them as they are, run again with --${ALLOW_CLEAR_SECRETS} and keep the file as safe as the keys themselves. Nothing was written.`,
  );
}

/**
 * Writes a backup file owner-only (0600, whatever the umask or a file it replaces), beside and renamed: a
 * backup file is whole or absent.
 */
export function writeBackupFile(file: string, bytes: Buffer): void {
  const partial = `${file}.partial`;
  fs.rmSync(partial, { force: true });
  fs.writeFileSync(partial, bytes, { mode: 0o600, flag: 'wx' });
  fs.chmodSync(partial, 0o600);
  fs.renameSync(partial, file);
}

async function appliedMigrations(database: Pick<Database, 'executeSql'>): Promise<number> {
  const { rows } = await database.executeSql('select count(*)::int as n from drizzle.__drizzle_migrations');
  return (rows[0] as { n: number }).n;
}

function container(kind: BackupHeader['kind'], migrations: number, payload: Buffer): Buffer {
  const header: BackupHeader = { kind, migrations, createdAt: new Date().toISOString(), bytes: payload.length, sha256: createHash('sha256').update(payload).digest('hex') };
  return Buffer.concat([Buffer.from(`${MAGIC}\n${JSON.stringify(header)}\n`), payload]);
}

/** A consistent copy of a running embedded database (the service's own PGlite). */
export async function backupPglite(database: Database, options: BackupOptions = {}): Promise<Buffer> {
  if (!database.dumpDataDir) throw new Error('not an embedded database');
  await refuseClearSecrets((text, values) => database.executeSql(text, values), options);
  const migrations = await appliedMigrations(database);
  const payload = Buffer.from(await (await database.dumpDataDir()).arrayBuffer());
  return container('pglite', migrations, payload);
}

/** pg_dump of a PostgreSQL database (custom format), in the same container. */
export async function backupPostgres(url: string, options: BackupOptions = {}): Promise<Buffer> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let migrations: number;
  try {
    await refuseClearSecrets((text, values) => client.query(text, values), options);
    migrations = await appliedMigrations({ executeSql: (text) => client.query(text) });
  } finally {
    await client.end();
  }
  const payload = await run('pg_dump', ['--format=custom', '--no-owner', '--dbname', url]);
  return container('postgres', migrations, payload);
}

/** Reads a backup file and checks it whole; throws BackupRefused with the reason. */
export function readBackup(file: Buffer, expectedKind: BackupHeader['kind']): { header: BackupHeader; payload: Buffer } {
  const first = file.indexOf(0x0a);
  const second = first < 0 ? -1 : file.indexOf(0x0a, first + 1);
  if (first < 0 || file.subarray(0, first).toString() !== MAGIC || second < 0) throw new BackupRefused('This is not a Latchkey backup file (or it was cut off before its header ended).');
  let header: BackupHeader;
  try {
    header = JSON.parse(file.subarray(first + 1, second).toString()) as BackupHeader;
  } catch {
    throw new BackupRefused('The backup file’s header is damaged.');
  }
  const payload = file.subarray(second + 1);
  if (payload.length < header.bytes) throw new BackupRefused(`The backup file is truncated: ${payload.length} of ${header.bytes} bytes. Nothing was restored.`);
  if (payload.length > header.bytes || createHash('sha256').update(payload).digest('hex') !== header.sha256)
    throw new BackupRefused('The backup file is damaged (its checksum does not match). Nothing was restored.');
  if (header.kind !== expectedKind)
    throw new BackupRefused(`This is a backup of ${header.kind === 'pglite' ? 'the embedded database' : 'a PostgreSQL database'}; this deployment uses ${expectedKind === 'pglite' ? 'the embedded database' : 'PostgreSQL (DATABASE_URL)'}. Nothing was restored.`);
  const known = knownMigrations();
  if (header.migrations > known)
    throw new BackupRefused(`The backup is from a newer Latchkey (database schema ${header.migrations}, this build knows ${known}). Upgrade Latchkey first. Nothing was restored.`);
  return { header, payload };
}

/**
 * Restores an embedded database into `pgdataDir`: the backup is unpacked and opened in a directory beside
 * it first; only when that works is the old directory moved aside (`pgdata.before-restore-<time>`) and
 * the new one put in its place. The service must be stopped.
 */
export async function restorePglite(file: Buffer, pgdataDir: string): Promise<{ previous: string | null }> {
  const { payload } = readBackup(file, 'pglite');
  const staging = `${pgdataDir}.restoring-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  try {
    const db = new PGlite(staging, { loadDataDir: new Blob([new Uint8Array(payload)]) });
    try {
      await db.waitReady;
      await db.query('select count(*) from drizzle.__drizzle_migrations');
    } finally {
      await db.close();
    }
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new BackupRefused(`The backup could not be opened (${error instanceof Error ? error.message : String(error)}). Nothing was restored.`);
  }
  let previous: string | null = null;
  if (fs.existsSync(pgdataDir)) {
    previous = `${pgdataDir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(pgdataDir, previous);
  }
  fs.renameSync(staging, pgdataDir);
  return { previous };
}

/** Restores into a PostgreSQL database with pg_restore, in one transaction: a failure leaves it as it was. */
export async function restorePostgres(file: Buffer, url: string): Promise<void> {
  const { payload } = readBackup(file, 'postgres');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-restore-'));
  try {
    const dump = path.join(tmp, 'latchkey.dump');
    fs.writeFileSync(dump, payload);
    await run('pg_restore', ['--clean', '--if-exists', '--no-owner', '--single-transaction', '--exit-on-error', '--dbname', url, dump]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new Error(`${command} could not run (${e.message}); install the PostgreSQL client tools`)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${command} failed (${code}): ${Buffer.concat(err).toString().trim()}`))));
  });
}

/**
 * The metrics port's admin route: POST /admin/backup answers a backup of the embedded database — the whole
 * database, signing keys included — so it takes a credential, not the port's reachability: the
 * METRICS_TOKEN bearer (compared in constant time). Without METRICS_TOKEN it is refused outright (403) and
 * the only way to a backup is `npm run backup`, through the owner-only socket in DATA_DIR.
 */
export function registerAdminRoutes(server: FastifyInstance, app: FastifyInstance): void {
  if (app.database.kind !== 'pglite') return;
  const token = app.config.metrics.token;
  server.post('/admin/backup', async (request, reply) => {
    if (!token)
      return reply.code(403).send({ code: 403, message: 'Backups over HTTP need METRICS_TOKEN (then send it as a bearer token); without it, run `npm run backup` on the host.' });
    if (!bearerMatches(request.headers.authorization, token))
      return reply.code(401).header('www-authenticate', 'Bearer realm="admin"').send({ code: 401, message: 'A bearer token (METRICS_TOKEN) is needed for /admin/backup' });
    const allowClearSecrets = ['true', '1'].includes(String((request.query as Record<string, unknown> | undefined)?.[ALLOW_CLEAR_SECRETS]));
    let body: Buffer;
    try {
      body = await backupPglite(app.database, { allowClearSecrets });
    } catch (error) {
      if (error instanceof BackupRefused) return reply.code(409).send({ code: 409, message: error.message });
      throw error;
    }
    return reply.type('application/octet-stream').send(body);
  });
}

/**
 * The embedded service's backup socket (DATA_DIR/admin.sock, mode 0600): `POST /backup` answers a backup.
 * Nothing else is served on it.
 */
export async function serveAdminSocket(app: FastifyInstance): Promise<void> {
  if (app.database.kind !== 'pglite') return;
  const socketPath = path.join(app.config.dataDir, ADMIN_SOCKET);
  fs.rmSync(socketPath, { force: true });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin.sock');
    if (req.method !== 'POST' || url.pathname !== '/backup') return void res.writeHead(404).end();
    backupPglite(app.database, { allowClearSecrets: url.searchParams.get(ALLOW_CLEAR_SECRETS) === 'true' }).then(
      (body) => res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body),
      (error: unknown) => {
        if (error instanceof BackupRefused) return void res.writeHead(409).end(error.message);
        app.log.error({ err: error }, 'backup failed');
        res.writeHead(500).end(error instanceof Error ? error.message : 'backup failed');
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, () => resolve()));
    fs.chmodSync(socketPath, 0o600);
  } catch (error) {
    app.log.warn({ err: error }, `no backup socket at ${socketPath}: npm run backup needs the service stopped`);
    return;
  }
  server.unref();
  app.addHook('onClose', async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(socketPath, { force: true });
  });
}

/** Asks a running embedded service for a backup; null when none answers on the socket. */
export function backupFromService(dataDir: string, options: BackupOptions = {}): Promise<Buffer | null> {
  const socketPath = path.join(dataDir, ADMIN_SOCKET);
  if (!fs.existsSync(socketPath)) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const query = options.allowClearSecrets ? `?${ALLOW_CLEAR_SECRETS}=true` : '';
    const req = http.request({ socketPath, path: `/backup${query}`, method: 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode === 200) resolve(body);
        else if (res.statusCode === 409) reject(new BackupRefused(body.toString()));
        else reject(new Error(`the service refused the backup: ${body.toString()}`));
      });
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' || e.code === 'ENOENT' ? resolve(null) : reject(e)));
    req.end();
  });
}

/** `npm run backup <file>`: from the running service, or from the data directory when none runs. */
export async function backup(config: Config, options: BackupOptions = {}): Promise<Buffer> {
  if (config.database.url) return backupPostgres(config.database.url, options);
  const fromService = await backupFromService(config.dataDir, options);
  if (fromService) return fromService;
  const pgdata = path.join(config.dataDir, 'pgdata');
  if (!fs.existsSync(pgdata)) throw new BackupRefused(`There is no embedded database in ${pgdata}.`);
  const { createDatabase } = await import('./db/client.js');
  const database = await createDatabase({ dataDir: pgdata });
  try {
    return await backupPglite(database, options);
  } finally {
    await database.close();
  }
}

/** `npm run restore <file>`: refuses while the embedded service runs (it would keep the old database open). */
export async function restore(config: Config, file: Buffer): Promise<string> {
  if (config.database.url) {
    await restorePostgres(file, config.database.url);
    return 'Restored into the PostgreSQL database. Start the service (it applies any newer migrations).';
  }
  if (await isServiceRunning(config.dataDir))
    throw new BackupRefused('The service is running on this data directory: stop it first. Nothing was restored.');
  const { previous } = await restorePglite(file, path.join(config.dataDir, 'pgdata'));
  return `Restored the embedded database.${previous ? ` The one it replaced is kept in ${previous}.` : ''} Start the service (it applies any newer migrations).`;
}

function isServiceRunning(dataDir: string): Promise<boolean> {
  const socketPath = path.join(dataDir, ADMIN_SOCKET);
  if (!fs.existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = http.request({ socketPath, path: '/', method: 'GET' }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}
