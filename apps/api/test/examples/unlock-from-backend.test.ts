import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair } from 'jose';
import { applicationKeys, applicationUsers, locks } from '../../src/db/schema.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { createLock, createSandbox, lockRow, logOf, share, type Sandbox } from '../fixtures/operations.js';

/**
 * The Getting Started script runs against a listening server exactly as a developer runs it
 * (a child process, real HTTP): it signs a user token with the developer's key, registers an ephemeral
 * key and unlocks the Front Door shared with that user's email.
 */
const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, '../../../../examples/unlock-from-backend.mjs');
let t: TestApp;
let sandbox: Sandbox;
let api: string;
let frontDoor: string;
let keyFile: string;
const KID = 'backend-key-1';
const EMAIL = 'door.user@example.com';

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  frontDoor = await createLock(t, sandbox.applicationId, { name: 'Front Door', unlockTime: 6 });
  await createLock(t, sandbox.applicationId, { name: 'Garage' });
  // The developer's key pair: the public half uploaded in the portal, the private half on their backend.
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  await t.database.db.insert(applicationKeys).values({ applicationId: sandbox.applicationId, kid: KID, jwk: { ...(await exportJWK(publicKey)), kid: KID, use: 'sig' } as never });
  keyFile = path.join(t.dataDir, 'signing-key.json');
  fs.writeFileSync(keyFile, JSON.stringify({ ...(await exportJWK(privateKey)), kid: KID }));
  // The owner shared the Front Door with an email that has no user yet; the script's token claims it.
  const [pending] = await t.database.db.insert(applicationUsers).values({ applicationId: sandbox.applicationId, email: EMAIL, status: 'pending' }).returning();
  await share(t, frontDoor, pending!.id);
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  api = `${address}/api`;
});
afterAll(() => t?.close());

const script = (env: Record<string, string>) =>
  run(process.execPath, [SCRIPT], { env: { PATH: process.env.PATH ?? '', LATCHKEY_API: api, KEY_FILE: keyFile, ISSUER: sandbox.issuer, USER_EMAIL: EMAIL, ...env }, timeout: 15_000 });

describe('examples/unlock-from-backend.mjs', () => {
  it('unlocks the Front Door shared with the user, and the unlock is in its log', async () => {
    const { stdout } = await script({});
    expect(stdout).toContain(`Unlocked Front Door (${frontDoor}) for 6 s.`);
    expect((await lockRow(t, frontDoor)).unlockedUntil!.getTime()).toBeGreaterThan(Date.now());
    expect((await logOf(t, sandbox, frontDoor))[0]).toMatchObject({ type: 'UNLOCK', rejected: false, actor: { email: EMAIL } });
  });

  it('says what is wrong when the lock is not shared with the user', async () => {
    const error = await script({ USER_EMAIL: 'nobody@example.com' }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 1 });
    expect((error as { stderr: string }).stderr).toContain('No such lock is shared with nobody@example.com');
  });

  it('says what is wrong when the key is not the one registered', async () => {
    const error = await script({ KEY_ID: 'not-uploaded' }).catch((e: { code: number; stderr: string }) => e);
    // To outsiders every failed key check reads the same; the token tester names the kid.
    expect((error as { stderr: string }).stderr).toMatch(/GET \/device\/mine → 401: .*could not be verified with a key registered for its issuer/);
  });

  it('leaves other locks alone', async () => {
    const rows = await t.database.db.select().from(locks);
    expect(rows.filter((r) => r.name === 'Garage').every((r) => r.unlockedUntil === null)).toBe(true);
  });
});
