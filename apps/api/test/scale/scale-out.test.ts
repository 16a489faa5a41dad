import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import sharp from 'sharp';
import pg from 'pg';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveLogoUrl, portalConfigSchema } from '@latchkey/contract';
import { makePng } from './png.js';
import { freePort, requestsInFlight, startService, startTcpProxy, waitReady, type ServiceProcess } from './processes.js';

/**
 * Two service processes on one PostgreSQL database, one S3-compatible bucket (s3rver)
 * behind a CDN base URL, and Redis — a journey that alternates between them. Configured as docs/deploy.md's
 * minimal N-instance set-up: DATABASE_URL plus the optional S3 and Redis, and no shared key or secret in
 * the environment (no JWT_PRIVATE_KEY, UPLOAD_SIGNING_SECRET or SECRETS_ENCRYPTION_KEY): the signing keys
 * and server secrets come from the database. Needs the built service (npm run build) and
 * TEST_DATABASE_URL + TEST_REDIS_URL (CI has both running).
 */
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BUCKET = 'latchkey-logos';

let dbName: string;
let s3: S3rver;
let s3Dir: string;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let a: ServiceProcess;
let b: ServiceProcess;
let directUrl: string;
const tmpDirs: string[] = [];

async function query<T>(text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: directUrl });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}
const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid;

async function json(res: Response) {
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}
function post(base: string, p: string, body?: unknown, token?: string) {
  return fetch(`${base}/api${p}`, {
    method: 'POST',
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
}
function get(base: string, p: string, token?: string) {
  return fetch(`${base}/api${p}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

beforeAll(async () => {
  dbName = `latchkey_scale_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const dbUrl = new URL(adminUrl);
  const pgPort = Number(dbUrl.port || 5432);
  proxy = await startTcpProxy(pgPort, dbUrl.hostname);

  s3Dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-s3-'));
  const s3Port = await freePort();
  s3 = new S3rver({ port: s3Port, address: '127.0.0.1', directory: s3Dir, silent: true, configureBuckets: [{ name: BUCKET, configs: [] }] });
  await s3.run();

  const shared = {
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    S3_BUCKET: BUCKET,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    CDN_BASE_URL: `http://127.0.0.1:${s3Port}/${BUCKET}`,
    REDIS_URL: redisUrl,
    // The limits this file trips count keys new to each run (a fresh email, a fresh user). The per-address
    // ones would count every run from 127.0.0.1 on the same Redis within their window: out of the way.
    LOGIN_RATE_LIMIT_MAX: '5',
    LOGIN_ADDRESS_RATE_LIMIT_MAX: '100000',
    ANONYMOUS_RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_MAX: '30',
  };
  const dataDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-scale-'));
    tmpDirs.push(d);
    return d;
  };
  const viaProxy = new URL(adminUrl);
  viaProxy.pathname = `/${dbName}`;
  const direct = new URL(viaProxy);
  directUrl = direct.toString();
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  // Both start at the same moment on an empty database: migrations must run once, safely.
  [a, b] = await Promise.all([
    startService({ ...shared, DATABASE_URL: viaProxy.toString(), DATA_DIR: dataDir() }),
    startService({ ...shared, DATABASE_URL: direct.toString(), DATA_DIR: dataDir() }),
  ]);
  await Promise.all([waitReady(a.url), waitReady(b.url)]);
}, 90_000);

afterAll(async () => {
  for (const p of [a, b]) if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
  await proxy?.close();
  await s3?.close();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  for (const d of [s3Dir, ...tmpDirs]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

describe('two instances on one Postgres, one bucket and Redis', () => {
  it('applied the migrations exactly once', async () => {
    const c = new pg.Client({ connectionString: adminUrl.replace(/\/[^/]*$/, `/${dbName}`) });
    await c.connect();
    const { rows } = await c.query('select count(*)::int as n from drizzle.__drizzle_migrations');
    await c.end();
    const journal = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../drizzle/meta/_journal.json'), 'utf8'));
    expect(rows[0].n).toBe(journal.entries.length);
  });

  it('runs a journey that alternates between A and B', async () => {
    const email = `scale.${randomUUID().slice(0, 8)}@example.com`;
    const reg = await post(a.url, '/auth/register', { email, password: 'correct-horse', displayName: 'Scale' });
    expect(reg.status).toBe(200);

    const login = await post(b.url, '/auth/token', { email, password: 'correct-horse' });
    expect(login.status).toBe(200);
    const session = await json(login);

    const created = await post(a.url, '/platform/application', { name: 'Scaled', companyName: 'Co', mailingAddress: '1 Road' }, session.authToken);
    expect(created.status).toBe(201);
    const appId = created.headers.get('location')!.split('/').pop()!;

    const upload = await post(b.url, `/platform/application/${appId}/logo`, { contentType: 'image/png' }, session.authToken);
    expect(upload.status).toBe(200);
    const { uploadUrl } = await json(upload);
    const png = makePng(8, 8);
    const put = await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: new Uint8Array(png) });
    expect(put.status).toBe(200);

    const config = portalConfigSchema.parse(await json(await get(a.url, '/config')));
    const logoUrl = deriveLogoUrl(uploadUrl, config);
    const saved = await post(a.url, `/platform/application/${appId}`, { logoUrl }, session.authToken);
    expect(saved.status).toBe(204);

    const app = await json(await get(a.url, `/platform/application/${appId}`, session.authToken));
    expect(app.logoUrl).toBe(logoUrl);
    const logo = await fetch(logoUrl);
    expect(logo.status).toBe(200);
    // What the CDN serves is the service's clean re-encoding of the upload (sharp), the same picture.
    expect(await sharp(Buffer.from(await logo.arrayBuffer())).metadata()).toMatchObject({ format: 'png', width: 8, height: 8 });

    const refreshed = await fetch(`${b.url}/api/auth/token/refresh`, { method: 'POST', headers: { authorization: `Bearer ${session.refreshToken}` } });
    expect(refreshed.status).toBe(200);
    const rotated = await json(refreshed);
    expect(rotated.refreshToken).not.toBe(session.refreshToken);

    expect((await get(b.url, '/account', rotated.authToken)).status).toBe(200);
    const destroyed = await post(a.url, '/auth/token/destroy', undefined, rotated.authToken);
    expect(destroyed.status).toBe(204);
    // B drops the session when the database's change notice arrives, usually within a millisecond.
    const loggedOutAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - loggedOutAt < 2000) status = (await get(b.url, '/account', rotated.authToken)).status;
    expect(status).toBe(401);
  });

  it('created one key set when both started at once on the empty database, and both use it', async () => {
    const keys = await query<{ kid: string; status: string }>('select kid, status from signing_keys');
    expect(keys).toHaveLength(1);
    expect(keys[0]!.status).toBe('active');
    for (const url of [a.url, b.url]) {
      const jwks = await json(await fetch(`${url}/.well-known/jwks.json`));
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual([keys[0]!.kid]);
    }
    // No key in the environment: each instance says so once, as a warning about encryption at rest.
    expect(a.logs.some((l) => l.includes('SECRETS_ENCRYPTION_KEY is not set'))).toBe(true);
  });

  it('rotates keys while both run: old tokens keep working, new ones are signed and verified on both', async () => {
    const email = `rotate.${randomUUID().slice(0, 8)}@example.com`;
    expect((await post(a.url, '/auth/register', { email, password: 'correct-horse' })).status).toBe(200);
    const before = await json(await post(a.url, '/auth/token', { email, password: 'correct-horse' }));
    const oldKid = kidOf(before.authToken);

    // The operator's CLI, against the same database; the instances are not restarted.
    const { stdout } = await promisify(execFile)(process.execPath, ['dist/keys.js', 'rotate'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: directUrl, DATA_DIR: tmpDirs[0]!, LOG_LEVEL: 'warn' },
    });
    const newKid = /New signing key (\S+) is active/.exec(stdout)?.[1];
    expect(newKid).toBeDefined();
    expect(newKid).not.toBe(oldKid);

    // Within SIGNING_KEYS_REFRESH_SECONDS both instances sign with the new key.
    const deadline = Date.now() + 15_000;
    // Fresh sign-ups (login is limited per address + email, LOGIN_RATE_LIMIT_MAX=5 here).
    const signUp = async (url: string) => json(await post(url, '/auth/register', { email: `rotate.${randomUUID().slice(0, 8)}@example.com`, password: 'correct-horse' }));
    const signedBy = async (url: string) => kidOf((await signUp(url)).authToken);
    let kids = [await signedBy(a.url), await signedBy(b.url)];
    while (kids.some((k) => k !== newKid) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      kids = [await signedBy(a.url), await signedBy(b.url)];
    }
    expect(kids).toEqual([newKid, newKid]);

    const fromA = await signUp(a.url);
    const fromB = await signUp(b.url);
    for (const url of [a.url, b.url]) {
      // New tokens from either instance verify on both …
      expect((await get(url, '/account', fromA.authToken)).status).toBe(200);
      expect((await get(url, '/account', fromB.authToken)).status).toBe(200);
      // … and the token signed before the rotation is still accepted until it expires.
      expect((await get(url, '/account', before.authToken)).status).toBe(200);
      const jwks = await json(await fetch(`${url}/.well-known/jwks.json`));
      expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    }
    // The refresh token signed with the old key still refreshes, on B, into new-key tokens.
    const refreshed = await fetch(`${b.url}/api/auth/token/refresh`, { method: 'POST', headers: { authorization: `Bearer ${before.refreshToken}` } });
    expect(refreshed.status).toBe(200);
    expect(kidOf((await json(refreshed)).authToken)).toBe(newKid);
  });

  it('shares login rate-limit counts between the instances', async () => {
    const email = `brute.${randomUUID().slice(0, 8)}@example.com`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await post(i % 2 === 0 ? a.url : b.url, '/auth/token', { email, password: 'wrong-password' });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 5).every((s) => s === 401)).toBe(true);
    expect(statuses[5]).toBe(429);
  });

  it('shares per-user request counts between the instances, and one user at the limit leaves another untouched', async () => {
    const signUp = async () => json(await post(a.url, '/auth/register', { email: `busy.${randomUUID().slice(0, 8)}@example.com`, password: 'correct-horse' }));
    const [busy, calm] = [await signUp(), await signUp()];
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await get(i % 2 === 0 ? a.url : b.url, '/account', busy.authToken);
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
    expect((await get(a.url, '/account', calm.authToken)).status).toBe(200);
    expect((await get(b.url, '/account', calm.authToken)).status).toBe(200);
  });

  it('answers 503 quickly while its database is unreachable and recovers by itself', async () => {
    const email = `ready.${randomUUID().slice(0, 8)}@example.com`;
    const session = await json(await post(b.url, '/auth/register', { email, password: 'correct-horse' }));
    await proxy.cut();
    const started = Date.now();
    const ready = await get(a.url, '/ready');
    expect(ready.status).toBe(503);
    const list = await get(a.url, '/platform/application', session.authToken);
    expect(list.status).toBe(503);
    expect(await json(list)).toEqual({ code: 503, message: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(a.child.exitCode).toBeNull();
    await proxy.restore();
    await waitReady(a.url, 20_000);
    expect((await get(a.url, '/platform/application', session.authToken)).status).toBe(200);
  });

  it('writes structured JSON logs with request ids', () => {
    const parsed = a.logs.flatMap((l) => {
      try {
        return [JSON.parse(l) as { reqId?: string; level?: number }];
      } catch {
        return [];
      }
    });
    expect(parsed.some((l) => typeof l.reqId === 'string' && typeof l.level === 'number')).toBe(true);
  });

  it('finishes in-flight requests on SIGTERM, then exits cleanly', async () => {
    const email = `drain.${randomUUID().slice(0, 8)}@example.com`;
    await post(b.url, '/auth/register', { email, password: 'correct-horse' });
    // Logins are slow on purpose (argon2id): read by the service and still running when the signal lands.
    const logins = await requestsInFlight(b.url, '/auth/token', { email, password: 'correct-horse' }, 4);
    b.child.kill('SIGTERM');
    expect(await logins.statuses).toEqual([200, 200, 200, 200]);
    expect(await b.exited).toBe(0);
  });
});
