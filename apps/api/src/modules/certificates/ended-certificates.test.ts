import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { operationErrors, type CertificateResponse } from '@latchkey/contract';
import { users } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, resetPassword } from '../../../test/fixtures/platform-users.js';
import { certify, createLock, createSandbox, execute, logOf, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * A password reset or change ends every certificate the account was issued before it: the platform refuses
 * an operation signed under one at once, on every instance, however recently that instance accepted it;
 * the same key certified again opens, its certificate starting no earlier than the account's certifiedAfter.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 5 });
});
afterAll(() => t?.close());


/** The same key certified again with `token`: a portal account's proved key needs no new code. */
async function certifyAgain(holder: KeyHolder, token: string): Promise<KeyHolder> {
  const raw = holder.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey: raw } });
  expect(res.statusCode, res.body).toBe(200);
  return { ...holder, token, chain: (res.json() as CertificateResponse).certificateChain };
}

const unlockWith = (app: TestApp['app'], holder: KeyHolder, token = holder.token) =>
  app.inject({ method: 'POST', url: `/api/device/${lockId}/execute`, headers: { ...bearer(token), 'content-type': 'application/jwt' }, payload: signOperation(holder, lockId, UNLOCK) });

const certifiedAfter = async (userId: string) => (await t.database.db.select({ at: users.certifiedAfter }).from(users).where(eq(users.id, userId)))[0]!.at;

describe('certificates issued before a password reset or change', () => {
  it('are refused (403) after a password reset, and logged; the same key certified again opens', async () => {
    const before = await certify(t, sandbox.owner.token);
    expect((await execute(t, lockId, before.token, signOperation(before, lockId, UNLOCK))).statusCode).toBe(204);

    const { authToken } = await resetPassword(t, sandbox.owner.userId, 'a-new-password');
    const refused = await execute(t, lockId, authToken, signOperation(before, lockId, UNLOCK));
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ code: 403, message: operationErrors.certificateRevoked });
    expect((await logOf(t, { ...sandbox, owner: { ...sandbox.owner, token: authToken } }, lockId))[0]).toMatchObject({
      type: 'UNLOCK',
      rejected: true,
      reason: operationErrors.certificateRevoked,
    });

    const again = await certifyAgain(before, authToken);
    const cutOff = await certifiedAfter(sandbox.owner.userId);
    expect(cutOff).not.toBeNull();
    expect(Date.parse(new X509Certificate(Buffer.from(again.chain[0]!, 'base64')).validFrom)).toBeGreaterThanOrEqual(cutOff!.getTime());
    expect((await execute(t, lockId, authToken, signOperation(again, lockId, UNLOCK))).statusCode).toBe(204);
    sandbox.owner.token = authToken;
  });

  it('are refused by a second instance at once, though it accepted one a moment before (its kept standing)', async () => {
    const second = await t.secondInstance();
    try {
      const before = await certify(t, sandbox.owner.token);
      // Twice: the second unlock is decided on the standing the instance kept from the first.
      expect((await unlockWith(second.app, before)).statusCode).toBe(204);
      expect((await unlockWith(second.app, before)).statusCode).toBe(204);

      const { authToken } = await resetPassword(t, sandbox.owner.userId, 'another-password');
      const refused = await unlockWith(second.app, before, authToken);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json()).toEqual({ code: 403, message: operationErrors.certificateRevoked });
      sandbox.owner.token = authToken;
    } finally {
      await second.close();
    }
  });

  it('are refused after a password change; the session that changed it certifies its key again', async () => {
    const password = 'known-password';
    const { authToken } = await resetPassword(t, sandbox.owner.userId, password);
    const before = await certify(t, authToken);
    expect((await unlockWith(t.app, before)).statusCode).toBe(204);

    const changed = await t.app.inject({ method: 'POST', url: '/api/account/password', headers: bearer(authToken), payload: { oldPassword: password, newPassword: 'changed-password' } });
    expect(changed.statusCode, changed.body).toBe(204);
    const refused = await unlockWith(t.app, before);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ code: 403, message: operationErrors.certificateRevoked });
    expect((await unlockWith(t.app, await certifyAgain(before, authToken))).statusCode).toBe(204);
  });
});
