import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { knownMigrations } from './db/client.js';
import { BackupRefused, backup, readBackup, registerAdminRoutes, restore, serveAdminSocket, writeBackupFile } from './backup.js';
import { SECRETS_UNENCRYPTED_WARNING } from './app.js';
import { countClearSecrets } from './lib/clear-secrets.js';
import { migratedPgliteDir, migratedPostgres } from '../test/fixtures/migrated-database.js';
import { decodeProtectedHeader } from 'jose';
import { SecretBox } from './lib/secret-box.js';
import { rotateSigningKey } from './lib/signing-keys.js';
import { testDbKind, uniqueEmail, type TestApp } from '../test/helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation } from '../test/fixtures/operations.js';

/**
 * A database filled, backed up while writes continue, wiped, restored — every acknowledged
 * write is there, and so is every signing key: a portal token signed by the active key and one by the key
 * a rotation replaced still verify, and a lock user's certificate issued before the backup still opens
 * its lock (the platform CA came back too). Bad
 * files (truncated, damaged, from a newer schema) are refused with a clear message and change nothing.
 * On PGlite the backup is asked of the running service over its socket, as `npm run backup` does.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * A data directory and, on PostgreSQL, a database of their own for a service started here, migrated as its
 * first start leaves them (a copy of the run's migrated database: see test/fixtures/migrated-database.ts).
 */
async function freshDatabase(prefix: string): Promise<{ dataDir: string; url: string | undefined }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  if (testDbKind !== 'postgres') {
    await migratedPgliteDir(path.join(dataDir, 'pgdata'));
    return { dataDir, url: undefined };
  }
  const { url, drop } = await migratedPostgres('latchkey_backup');
  cleanups.push(drop);
  return { dataDir, url };
}

/** Empties the database: the PGlite directory removed, or every schema of the PostgreSQL database dropped. */
async function wipe(dataDir: string, url: string | undefined) {
  if (!url) return fs.rmSync(path.join(dataDir, 'pgdata'), { recursive: true, force: true });
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('drop schema public cascade; create schema public; drop schema if exists drizzle cascade');
  for (const { nspname } of (await c.query(`select nspname from pg_namespace where nspname like 'pgboss%'`)).rows as { nspname: string }[])
    await c.query(`drop schema ${nspname} cascade`);
  await c.end();
}

const SECRETS_KEY = 'backup-test-secrets-key-0123456789abcdef';
/** The test fixtures' view of an app built here. */
const fixtureApp = (app: FastifyInstance) => ({ app, database: app.database }) as unknown as TestApp;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

async function start(dataDir: string, url: string | undefined): Promise<FastifyInstance> {
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://localhost:3000',
    SECRETS_ENCRYPTION_KEY: SECRETS_KEY,
    RATE_LIMIT_MAX: '100000',
    ...(url ? { DATABASE_URL: url, DATABASE_POOL_SIZE: '5' } : {}),
  });
  const app = await buildApp(config, { logger: false });
  await serveAdminSocket(app);
  await app.ready();
  return app;
}
const configOf = (dataDir: string, url: string | undefined) => loadConfig({ DATA_DIR: dataDir, ...(url ? { DATABASE_URL: url } : {}) });

describe(`backup and restore (${testDbKind})`, { timeout: 120_000 }, () => {
  it('restores every acknowledged write and every signing key of a backup taken while writes went on', async () => {
    const { dataDir, url } = await freshDatabase('latchkey-backup-');
    let app = await start(dataDir, url);

    // Fill: an owner, an application, some locks.
    const email = uniqueEmail('backup');
    const reg = await app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'backup-pass' } });
    expect(reg.statusCode, reg.body).toBe(200);
    const token = reg.json<{ authToken: string }>().authToken;
    const auth = { authorization: `Bearer ${token}` };

    // A key rotation (npm run keys:rotate): the first token's key now only verifies; a second portal
    // account's token is signed by the new one.
    const rotated = await rotateSigningKey(app.db, new SecretBox(SECRETS_KEY), 3600);
    expect(rotated.previousKid).toBe(decodeProtectedHeader(token).kid);
    await app.tokens.keys.reload();
    const second = await app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('backup-rotated'), password: 'backup-pass' } });
    expect(second.statusCode, second.body).toBe(200);
    const rotatedAuth = { authorization: `Bearer ${second.json<{ authToken: string }>().authToken}` };
    expect(decodeProtectedHeader(second.json<{ authToken: string }>().authToken).kid).toBe(rotated.kid);

    // A lock user with a certificate from the platform CA, shared on a lock, whose signed unlock works.
    const sandbox = await createSandbox(fixtureApp(app));
    const doorId = await createLock(fixtureApp(app), sandbox.applicationId);
    const alice = await certify(fixtureApp(app), await appUserToken(sandbox, 'backup-alice'));
    await share(fixtureApp(app), doorId, alice.userId);
    expect((await execute(fixtureApp(app), doorId, alice.token, signOperation(alice, doorId, UNLOCK))).statusCode).toBe(204);
    const created = await app.inject({ method: 'POST', url: '/api/platform/application', headers: auth, payload: { name: 'Backup Doors', companyName: 'Backup Co', mailingAddress: '1 Road' } });
    expect(created.statusCode, created.body).toBe(201);
    const applicationId = String(created.headers.location).split('/').pop()!;
    const addLock = (name: string) => app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/lock`, headers: auth, payload: { name } });
    for (let i = 0; i < 5; i++) expect((await addLock(`before ${i}`)).statusCode).toBe(201);

    // Writes go on while the backup is taken; the ones acknowledged before it began must all be in it.
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await addLock(`during ${i}`);
        if (res.statusCode === 201) acknowledged.push(`during ${i}`);
      }
    })();
    while (acknowledged.length < 3) await new Promise((r) => setTimeout(r, 5));
    const ackedBefore = [...acknowledged];
    const file = await backup(configOf(dataDir, url));
    const ackedAfterStart = acknowledged.length;
    writing = false;
    await writer;
    expect(acknowledged.length).toBeGreaterThan(3);
    const backupFile = path.join(dataDir, 'latchkey.backup');
    fs.writeFileSync(backupFile, file);
    expect(readBackup(file, url ? 'postgres' : 'pglite').header.migrations).toBe(knownMigrations());

    // Restoring while the embedded service runs is refused.
    if (!url) await expect(restore(configOf(dataDir, url), file)).rejects.toThrow(/stop it first/);

    await app.close();
    await wipe(dataDir, url);
    await restore(configOf(dataDir, url), fs.readFileSync(backupFile));
    app = await start(dataDir, url);
    cleanups.push(() => app.close());

    // The token issued before the backup still verifies: the signing key and the session came back.
    const locks = await app.inject({ url: `/api/platform/application/${applicationId}/lock`, headers: auth });
    expect(locks.statusCode, locks.body).toBe(200);
    const names = new Set(locks.json<{ name: string }[]>().map((l) => l.name));
    for (let i = 0; i < 5; i++) expect(names.has(`before ${i}`)).toBe(true);
    for (const name of ackedBefore) expect(names.has(name)).toBe(true);
    // Nothing restored that was never written; writes after the backup began may or may not be in it.
    for (const name of names) expect(name.startsWith('before') || name === 'Front Door' || acknowledged.slice(0, ackedAfterStart + 1).includes(name)).toBe(true);
    const login = await app.inject({ url: '/api/account', headers: auth });
    expect(login.statusCode, login.body).toBe(200);
    // The key the rotation replaced verifies the first token (above); the active key the second.
    const afterRotation = await app.inject({ url: '/api/account', headers: rotatedAuth });
    expect(afterRotation.statusCode, afterRotation.body).toBe(200);
    expect(app.tokens.keys.jwks().map((k) => k.kid).sort()).toEqual([rotated.previousKid, rotated.kid].sort());

    // The certificate issued before the backup still verifies: a new signed unlock with it is accepted.
    const unlock = await execute(fixtureApp(app), doorId, alice.token, signOperation(alice, doorId, UNLOCK));
    expect(unlock.statusCode, unlock.body).toBe(204);
  });

  it('refuses a truncated, a damaged and a newer-schema backup with a clear message, changing nothing', async () => {
    const { dataDir, url } = await freshDatabase('latchkey-backup-');
    const app = await start(dataDir, url);
    const email = uniqueEmail('kept');
    expect((await app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'kept-pass' } })).statusCode).toBe(200);
    await app.close();
    const config = configOf(dataDir, url);
    const good = await backup(config);
    const kind = url ? 'postgres' : 'pglite';

    const truncated = good.subarray(0, good.length - 100);
    const damaged = Buffer.from(good);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 10) ^ 0xff, damaged.length - 10);
    const text = good.toString('latin1');
    const headerEnd = text.indexOf('\n', text.indexOf('\n') + 1);
    const header = JSON.parse(text.slice(text.indexOf('\n') + 1, headerEnd)) as Record<string, unknown>;
    const newer = Buffer.concat([Buffer.from(`LATCHKEY-BACKUP 1\n${JSON.stringify({ ...header, migrations: knownMigrations() + 1 })}\n`), good.subarray(headerEnd + 1)]);
    const cases: [Buffer, RegExp][] = [
      [truncated, /truncated/],
      [damaged, /damaged/],
      [newer, /newer Latchkey.*Upgrade Latchkey first/],
      [good.subarray(0, 10), /not a Latchkey backup/],
    ];
    for (const [file, message] of cases) {
      expect(() => readBackup(file, kind)).toThrow(BackupRefused);
      await expect(restore(config, file)).rejects.toThrow(message);
    }
    if (!url) expect(fs.readdirSync(dataDir).filter((f) => f.startsWith('pgdata'))).toEqual(['pgdata']);

    // The database is as it was: the user is still there.
    const again = await start(dataDir, url);
    cleanups.push(() => again.close());
    expect((await again.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'kept-pass' } })).statusCode).toBe(409);
  });
});

describe.skipIf(testDbKind !== 'pglite')('the backup route on the metrics port', { timeout: 60_000 }, () => {
  it('listens on 127.0.0.1 unless METRICS_HOST says otherwise, whatever HOST is', async () => {
    expect(loadConfig({ HOST: '0.0.0.0' }).metrics.host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_HOST: '10.1.2.3' }).metrics.host).toBe('10.1.2.3');
  });

  it('answers POST /admin/backup to the METRICS_TOKEN bearer only; without METRICS_TOKEN never, and npm run backup still works', async () => {
    const { dataDir } = await freshDatabase('latchkey-admin-');
    const token = 'admin-token-0123456789abcdef';
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', HOST: '0.0.0.0', METRICS_PORT: '0', METRICS_TOKEN: token });
    const app = await buildApp(config, { logger: false, adminRoutes: registerAdminRoutes });
    cleanups.push(() => app.close());
    await serveAdminSocket(app);
    // As server.ts calls it: no host given, so METRICS_HOST's default, not HOST's 0.0.0.0.
    const address = (await app.metrics.listen())!;
    expect((app.metrics.server!.server.address() as AddressInfo).address).toBe('127.0.0.1');

    const post = (headers: Record<string, string> = {}) => fetch(`${address}/admin/backup`, { method: 'POST', headers });
    const refused = await post();
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain('LATCHKEY-BACKUP');
    expect((await post({ authorization: `Bearer ${token.slice(0, -1)}X` })).status).toBe(401);
    expect((await post({ authorization: token })).status).toBe(401);
    // This database keeps its secrets in clear (no SECRETS_ENCRYPTION_KEY): refused unless asked for.
    const clear = await post({ authorization: `Bearer ${token}` });
    expect(clear.status).toBe(409);
    expect(await clear.text()).toMatch(/in clear.*--allow-clear-secrets/);
    const allowed = await fetch(`${address}/admin/backup?allow-clear-secrets=true`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(readBackup(Buffer.from(await allowed.arrayBuffer()), 'pglite').header.kind).toBe('pglite');

    // Without METRICS_TOKEN the route refuses everyone; the CLI's socket needs nothing more.
    const bare = Fastify({ logger: false });
    cleanups.push(() => bare.close());
    registerAdminRoutes(bare, { database: app.database, config: { ...config, metrics: { ...config.metrics, token: undefined } } } as unknown as FastifyInstance);
    for (const authorization of [undefined, `Bearer ${token}`]) {
      const res = await bare.inject({ method: 'POST', url: '/admin/backup', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(403);
      expect(res.body).toMatch(/npm run backup/);
    }
    expect(readBackup(await backup(configOf(dataDir, undefined), { allowClearSecrets: true }), 'pglite').header.kind).toBe('pglite');
  });
});

describe(`secrets at rest and backups (${testDbKind})`, { timeout: 120_000 }, () => {
  /** A service on `dataDir` (and `url`) whose log lines are kept; `key`: SECRETS_ENCRYPTION_KEY. */
  async function startLogged(dataDir: string, url: string | undefined, key: string | undefined) {
    const config = loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      PUBLIC_URL: 'http://localhost:3000',
      ...(key ? { SECRETS_ENCRYPTION_KEY: key } : {}),
      ...(url ? { DATABASE_URL: url, DATABASE_POOL_SIZE: '5' } : {}),
    });
    const log: string[] = [];
    const app = await buildApp(config, { logStream: { write: (line: string) => void log.push(line) } });
    await serveAdminSocket(app);
    await app.ready();
    return { app, log };
  }
  const clearSecrets = (app: FastifyInstance) => countClearSecrets((text, values) => app.database.executeSql(text, values));

  it('refuses to write a backup holding secrets in clear unless asked; warns at start without a key; a key seals them at the next start', async () => {
    const { dataDir, url } = await freshDatabase('latchkey-clear-');

    // Without a key: a warning at start, and the CA keys, the signing key and a webhook secret in clear.
    let { app, log } = await startLogged(dataDir, url, undefined);
    expect(log.join('')).toContain(SECRETS_UNENCRYPTED_WARNING.slice(0, 60));
    const reg = await app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('clear'), password: 'clear-pass' } });
    expect(reg.statusCode, reg.body).toBe(200);
    const auth = { authorization: `Bearer ${reg.json<{ authToken: string }>().authToken}` };
    const created = await app.inject({ method: 'POST', url: '/api/platform/application', headers: auth, payload: { name: 'Clear Doors', companyName: 'Clear Co', mailingAddress: '1 Road' } });
    const applicationId = String(created.headers.location).split('/').pop()!;
    const hook = await app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/webhook`, headers: auth, payload: { url: 'https://1.1.1.1/latchkey', events: ['lock.unlocked'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const locks = await app.inject({ url: `/api/platform/application/${applicationId}/lock`, headers: auth });
    const lockId = locks.json<{ id: string }[]>()[0]!.id;
    const codesUrl = `/api/platform/application/${applicationId}/lock/${lockId}/access-code`;
    const code = await app.inject({ method: 'POST', url: codesUrl, headers: auth, payload: { name: 'Cleaner', code: '482913' } });
    expect(code.statusCode, code.body).toBe(201);
    const clear = await clearSecrets(app);
    expect(clear.serverSecrets).toBeGreaterThanOrEqual(2); // the platform CA and the device CA among them
    expect(clear.signingKeys).toBe(1);
    expect(clear.webhookSecrets).toBe(1);
    expect(clear.doorSecrets).toBe(1);

    // The backup is refused with what to do, and nothing is written; asked explicitly, it is written.
    const file = path.join(dataDir, 'clear.backup');
    const refusal = await backup(configOf(dataDir, url)).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(BackupRefused);
    expect((refusal as Error).message).toMatch(/token signing key.*webhook secret.*in clear.*SECRETS_ENCRYPTION_KEY.*--allow-clear-secrets/);
    expect(fs.existsSync(file)).toBe(false);
    const withClear = await backup(configOf(dataDir, url), { allowClearSecrets: true });
    expect(readBackup(withClear, url ? 'postgres' : 'pglite').header.migrations).toBe(knownMigrations());
    await app.close();

    // With a key: every clear secret is sealed at start, the backup holds none, and everything still works.
    ({ app, log } = await startLogged(dataDir, url, SECRETS_KEY));
    cleanups.push(() => app.close());
    expect(log.join('')).not.toContain(SECRETS_UNENCRYPTED_WARNING.slice(0, 60));
    expect(log.join('')).toMatch(/Sealed \d+ secrets stored in clear/);
    expect((await clearSecrets(app)).total).toBe(0);
    const codes = await app.inject({ url: codesUrl, headers: auth });
    expect(codes.json<{ code: string }[]>().map((c) => c.code)).toEqual(['482913']);
    expect((await app.inject({ url: '/api/account', headers: auth })).statusCode).toBe(200);
    const hooks = await app.inject({ url: `/api/platform/application/${applicationId}/webhook`, headers: auth });
    expect(hooks.statusCode, hooks.body).toBe(200);
    const sealed = await backup(configOf(dataDir, url));
    expect(readBackup(sealed, url ? 'postgres' : 'pglite').header.migrations).toBe(knownMigrations());
  });

  it('writes a backup file owner-only (0600), whatever the umask or the file it replaces allowed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-backup-file-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'latchkey.backup');
    fs.writeFileSync(file, 'an older backup');
    fs.chmodSync(file, 0o644);
    fs.writeFileSync(`${file}.partial`, 'a run that died');
    fs.chmodSync(`${file}.partial`, 0o666);
    writeBackupFile(file, Buffer.from('LATCHKEY-BACKUP 1\n'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('LATCHKEY-BACKUP 1\n');
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });
});
