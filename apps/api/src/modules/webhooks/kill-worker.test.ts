import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookDelivery, WebhookWithSecret } from '@latchkey/contract';
import { builtService } from '../../../test/fixtures/built-service.js';
import { migratedPgliteDir, migratedPostgres } from '../../../test/fixtures/migrated-database.js';
import { startReceiver, verifySignature } from '../../../test/fixtures/webhook-receiver.js';
import { eventually, testDbKind } from '../../../test/helpers.js';
import { freePort, waitReady } from '../../../test/scale/processes.js';

/**
 * A worker killed with SIGKILL in the middle of a delivery loses nothing. The service runs
 * as real processes (the built service) on one migrated database — PostgreSQL, or the embedded
 * PGlite's data directory, reopened by the next process. The first process is killed while the
 * receiver holds its delivery open; the second finds the job expired and delivers it again, with the
 * same webhook-id (at least once).
 */
const apiDir = path.resolve(import.meta.dirname, '../../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-kill-'));
let databaseUrl: string | undefined;
let dropDatabase = async () => {};
const children: ReturnType<typeof spawn>[] = [];

async function startService() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [await builtService()], {
    cwd: apiDir,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      // Any free port for the device broker: the default one may be taken by another test run or service.
      MQTT_PORT: '0',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      OUTBOUND_ALLOW: '127.0.0.1',
      WEBHOOK_TIMEOUT_SECONDS: '2',
      WEBHOOK_RETRY_DELAY_SECONDS: '1',
      RATE_LIMIT_MAX: '100000',
      LOGIN_RATE_LIMIT_MAX: '100000',
      // Stopped by SIGTERM here: no readiness drain (its own test is in test/scale/rolling-restart.test.ts).
      SHUTDOWN_DRAIN_SECONDS: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logs: string[] = [];
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  children.push(child);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitReady(url, 60_000).catch((e: Error) => {
    throw new Error(`${e.message}\n${logs.join('')}`);
  });
  return { url, child, exited };
}

beforeAll(async () => {
  if (testDbKind !== 'postgres') return migratedPgliteDir(path.join(dataDir, 'pgdata'));
  ({ url: databaseUrl, drop: dropDatabase } = await migratedPostgres('latchkey_kill'));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await dropDatabase();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a worker killed mid-delivery', () => {
  it('loses nothing: the next process delivers the same event with the same webhook-id', { timeout: 120_000 }, async () => {
    let heldOpen: () => void = () => {};
    const firstArrived = new Promise<void>((resolve) => (heldOpen = resolve));
    // The first attempt is held open (the worker is mid-delivery when it dies); later ones are taken.
    const receiver = await startReceiver((_r, n) => {
      if (n === 1) {
        heldOpen();
        return 'hang';
      }
      return 200;
    });
    try {
      const a = await startService();
      const json = { 'content-type': 'application/json' };
      const reg = await fetch(`${a.url}/api/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email: `kill.${randomUUID().slice(0, 8)}@example.com`, password: 'kill-pass-123', displayName: 'K' }) });
      expect(reg.status).toBe(200);
      const auth = { ...json, authorization: `Bearer ${((await reg.json()) as { authToken: string }).authToken}` };
      const created = await fetch(`${a.url}/api/platform/application`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Kill Doors', companyName: 'K Ltd', mailingAddress: '1 Road' }) });
      expect(created.status, await created.clone().text()).toBe(201);
      const appId = created.headers.get('location')!.split('/').pop()!;
      const hookRes = await fetch(`${a.url}/api/platform/application/${appId}/webhook`, { method: 'POST', headers: auth, body: JSON.stringify({ url: receiver.url, events: ['application.updated'] }) });
      expect(hookRes.status, await hookRes.clone().text()).toBe(201);
      const hook = (await hookRes.json()) as WebhookWithSecret;
      expect((await fetch(`${a.url}/api/platform/application/${appId}`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Killed Doors' }) })).status).toBe(204);

      await firstArrived;
      a.child.kill('SIGKILL');
      await a.exited;

      const b = await startService();
      expect(await eventually(() => receiver.received.length >= 2, 60_000)).toBe(true);
      const [first, second] = receiver.received;
      expect(second!.id).toBe(first!.id);
      expect(second!.body).toBe(first!.body);
      expect(verifySignature(hook.secret, second!)).toBe(true);
      expect(JSON.parse(second!.body)).toMatchObject({ type: 'application.updated', data: { applicationId: appId } });
      const log = async () => (await (await fetch(`${b.url}/api/platform/application/${appId}/webhook/${hook.id}/delivery`, { headers: auth })).json()) as WebhookDelivery[];
      expect(await eventually(async () => (await log())[0]?.status === 'succeeded', 10_000)).toBe(true);
      expect(await log()).toHaveLength(1);
      b.child.kill('SIGTERM');
      await b.exited;
    } finally {
      await receiver.close();
    }
  });
});
