import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { startService, startTcpProxy, waitReady, type ServiceProcess } from './processes.js';

/**
 * Faults: the database vanishing under load, and `kill -9` in the middle of a write burst.
 * Real processes of the built service; PGlite (data directory on disk) and PostgreSQL.
 */
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function call(base: string, method: string, p: string, body?: unknown, token?: string) {
  const res = await fetch(`${base}/api${p}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, ms: 0 };
}

async function scratchDb() {
  const name = `latchkey_fault_${randomUUID().replace(/-/g, '')}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  cleanups.push(async () => {
    const d = new pg.Client({ connectionString: adminUrl });
    await d.connect();
    await d.query(`drop database if exists ${name} with (force)`);
    await d.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url;
}

function tmpDir() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-fault-'));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function owner(base: string) {
  const reg = await call(base, 'POST', '/auth/register', { email: `fault.${randomUUID().slice(0, 8)}@example.com`, password: 'fault-pass' });
  const token = reg.body.authToken as string;
  const created = await fetch(`${base}/api/platform/application`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Faulty', companyName: 'Co', mailingAddress: 'Road' }),
  });
  return { token, appId: created.headers.get('location')!.split('/').pop()! };
}

describe('Postgres stops under load', () => {
  it('answers 503 JSON quickly, stays up, and recovers by itself', async () => {
    const db = await scratchDb();
    const proxy = await startTcpProxy(Number(db.port || 5432), db.hostname);
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(db);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const svc = await startService({ DATABASE_URL: viaProxy.toString(), DATA_DIR: tmpDir(), RATE_LIMIT_MAX: '1000000', ANONYMOUS_RATE_LIMIT_MAX: '1000000' });
    cleanups.push(() => void svc.child.kill('SIGKILL'));
    await waitReady(svc.url);
    const { token, appId } = await owner(svc.url);

    let stop = false;
    const seen: { status: number; ms: number; json: boolean }[] = [];
    const worker = async () => {
      while (!stop) {
        const t0 = Date.now();
        const res = await fetch(`${svc.url}/api/platform/application/${appId}`, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
        if (!res) continue;
        const text = await res.text();
        let json: boolean;
        try {
          const b = JSON.parse(text);
          json = typeof b === 'object' && b !== null && (res.status === 200 || (typeof b.code === 'number' && typeof b.message === 'string'));
        } catch {
          json = false;
        }
        seen.push({ status: res.status, ms: Date.now() - t0, json });
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await new Promise((r) => setTimeout(r, 500));
    await proxy.cut();
    await new Promise((r) => setTimeout(r, 3000));
    const duringOutage = seen.length;
    await proxy.restore();
    await waitReady(svc.url, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(workers);

    const unavailable = seen.filter((s) => s.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.json)).toBe(true);
    expect(seen.every((s) => s.status === 200 || s.status === 503)).toBe(true);
    const slowest = Math.max(...unavailable.map((s) => s.ms));
    console.log(`db outage: ${unavailable.length} × 503, slowest ${slowest} ms; ${seen.length - duringOutage} answers after recovery`);
    expect(slowest).toBeLessThan(5000);
    expect(svc.child.exitCode).toBeNull();
    expect(seen.at(-1)!.status).toBe(200);
  }, 90_000);
});

describe.each(['pglite', 'postgres'] as const)('kill -9 during a write burst (%s)', (kind) => {
  it('keeps every write acknowledged before the kill', async () => {
    const dataDir = tmpDir();
    const env: Record<string, string> = { DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', ANONYMOUS_RATE_LIMIT_MAX: '1000000' };
    if (kind === 'postgres') env.DATABASE_URL = (await scratchDb()).toString();
    let svc: ServiceProcess = await startService(env);
    await waitReady(svc.url);
    const { token, appId } = await owner(svc.url);

    const acknowledged: string[] = [];
    let n = 0;
    let killed = false;
    const writer = async () => {
      while (!killed) {
        const origin = `https://burst-${n++}.example.com`;
        const res = await fetch(`${svc.url}/api/platform/application/${appId}/cors`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ url: origin }),
        }).catch(() => null);
        if (res?.status === 204) acknowledged.push(origin);
      }
    };
    const writers = Array.from({ length: 6 }, writer);
    // Killed once more than ten writes are acknowledged, with six writers still going: mid-burst, however
    // fast the host. The cap is for a service that acknowledges nothing.
    const burst = await eventually(() => acknowledged.length > 10, 30_000);
    svc.child.kill('SIGKILL');
    killed = true;
    await svc.exited;
    await Promise.all(writers);
    expect(burst, `${acknowledged.length} writes acknowledged`).toBe(true);

    svc = await startService(env);
    cleanups.push(() => void svc.child.kill('SIGKILL'));
    await waitReady(svc.url, 60_000);
    const app = await call(svc.url, 'GET', `/platform/application/${appId}`, undefined, token);
    expect(app.status).toBe(200);
    const stored = new Set(app.body.corsDomains as string[]);
    const lost = acknowledged.filter((o) => !stored.has(o));
    console.log(`kill -9 (${kind}): ${acknowledged.length} acknowledged writes, ${lost.length} lost`);
    expect(lost).toEqual([]);
  }, 120_000);
});
