import fs from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountErrors, operationErrors, type CertificateResponse } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { settleAccountMail } from '../account/account-trust.service.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, createLock, createSandbox, execute, pendingKeyCode, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * A stolen password alone certifies no new key. The flow exactly as the platform's
 * JavaScript SDK drives it (doordeck-sdk-javascript common/services/certificate.js): POST /auth/certificate
 * → 423; POST /auth/certificate/verify {ephemeralKey} (no method) → {method}; the emailed code, signed with
 * libsodium's crypto_sign_detached over the code's bytes, standard base64 → POST /auth/certificate/check.
 */
let t: TestApp;
let sandbox: Sandbox;
beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
});
afterAll(() => t?.close());

const raw = (key: KeyObject) => key.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
const post = (url: string, token: string, payload: object) => t.app.inject({ method: 'POST', url: `/api${url}`, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const signCode = (code: string, privateKey: KeyObject) => sign(null, Buffer.from(code), privateKey).toString('base64');

async function account() {
  const email = uniqueEmail('twofactor');
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'second-factor' } });
  const token = res.json().authToken as string;
  await settleAccountMail(t.app); // the verification email goes out after the answer
  const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
  return { email, token, userId };
}
function mailTo(to: string): { subject: string; text: string } | undefined {
  const dir = path.join(t.dataDir, 'outbox');
  return fs
    .readdirSync(dir)
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { to: string; subject: string; text: string })
    .filter((m) => m.to === to)
    .at(-1);
}

describe('a second factor for new keys', () => {
  it('the JavaScript SDK’s flow: 423, a code by email, the signed code → the chain; the key then certifies at once', async () => {
    const { email, token, userId } = await account();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const first = await post('/auth/certificate', token, { ephemeralKey: raw(publicKey) });
    expect(first.statusCode).toBe(423);
    expect(first.json()).toEqual({ code: 423, message: accountErrors.secondFactorRequired });

    const asked = await post('/auth/certificate/verify', token, { ephemeralKey: raw(publicKey) });
    expect(asked.statusCode).toBe(200);
    expect(asked.json()).toEqual({ method: 'EMAIL' });
    const mail = mailTo(email)!;
    expect(mail.subject).toBe('Your Latchkey verification code');
    const code = mail.text.match(/^\s+(\d{6})$/m)![1]!;
    expect(code).toBe(await pendingKeyCode(t, userId));

    const checked = await post('/auth/certificate/check', token, { verificationSignature: signCode(code, privateKey) });
    expect(checked.statusCode).toBe(200);
    const body = checked.json() as CertificateResponse;
    expect(body.userId).toBe(userId);
    const leaf = new X509Certificate(Buffer.from(body.certificateChain[0]!, 'base64'));
    expect(leaf.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64')).toBe(raw(publicKey));
    // The code is spent; the proved key certifies again without one (the SDK re-registers at 7 days left).
    expect((await post('/auth/certificate/check', token, { verificationSignature: signCode(code, privateKey) })).json().message).toBe(accountErrors.codeNotPending);
    expect((await post('/auth/certificate', token, { ephemeralKey: raw(publicKey) })).statusCode).toBe(200);
    // Another key of the same account needs its own code.
    expect((await post('/auth/certificate', token, { ephemeralKey: raw(generateKeyPairSync('ed25519').publicKey) })).statusCode).toBe(423);
  });

  it('the headless SDK sends ?method=EMAIL; a German reader gets the code in German', async () => {
    const { email, token } = await account();
    const { publicKey } = generateKeyPairSync('ed25519');
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/certificate/verify?method=EMAIL', headers: { ...bearer(token), 'accept-language': 'de' }, payload: { ephemeralKey: raw(publicKey) } });
    expect(res.json()).toEqual({ method: 'EMAIL' });
    expect(mailTo(email)!.subject).toBe('Ihr Latchkey-Bestätigungscode');
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/certificate/verify?method=SMS', headers: bearer(token), payload: { ephemeralKey: raw(publicKey) } })).statusCode).toBe(400);
  });

  it('refuses a wrong code, a code signed by another key, garbage; five wrong tries spend the code', async () => {
    const { token, userId } = await account();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    expect((await post('/auth/certificate/check', token, { verificationSignature: signCode('123456', privateKey) })).json()).toEqual({ code: 400, message: accountErrors.codeNotPending });
    await post('/auth/certificate/verify', token, { ephemeralKey: raw(publicKey) });
    const code = await pendingKeyCode(t, userId);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const other = generateKeyPairSync('ed25519').privateKey;
    const attempts = [signCode(wrong, privateKey), signCode(code, other), 'not a signature', Buffer.alloc(64).toString('base64')];
    for (const verificationSignature of attempts) {
      const res = await post('/auth/certificate/check', token, { verificationSignature });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(accountErrors.codeWrong);
    }
    const fifth = await post('/auth/certificate/check', token, { verificationSignature: signCode(wrong, privateKey) });
    expect(fifth.json()).toEqual({ code: 400, message: accountErrors.codeTooManyTries });
    // Even the right code no longer works: a new one must be asked for.
    expect((await post('/auth/certificate/check', token, { verificationSignature: signCode(code, privateKey) })).json().message).toBe(accountErrors.codeNotPending);
    await post('/auth/certificate/verify', token, { ephemeralKey: raw(publicKey) });
    const fresh = await pendingKeyCode(t, userId);
    expect((await post('/auth/certificate/check', token, { verificationSignature: signCode(fresh, privateKey) })).statusCode).toBe(200);
  });

  it('an expired code and a replaced code are refused; another user cannot use your code', async () => {
    const a = await account();
    const b = await account();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    await post('/auth/certificate/verify', a.token, { ephemeralKey: raw(publicKey) });
    const old = await pendingKeyCode(t, a.userId);
    expect((await post('/auth/certificate/check', b.token, { verificationSignature: signCode(old, privateKey) })).json().message).toBe(accountErrors.codeNotPending);
    await post('/auth/certificate/verify', a.token, { ephemeralKey: raw(publicKey) });
    const current = await pendingKeyCode(t, a.userId);
    if (old !== current) expect((await post('/auth/certificate/check', a.token, { verificationSignature: signCode(old, privateKey) })).json().message).toBe(accountErrors.codeWrong);
    await t.database.db.execute(`update account_tokens set expires_at = now() - interval '1 second' where user_id = '${a.userId}'` as never);
    expect((await post('/auth/certificate/check', a.token, { verificationSignature: signCode(current, privateKey) })).json().message).toBe(accountErrors.codeExpired);
  });

  it('keeps the ephemeral key checks (malformed, weak) on /verify; application users skip the second factor', async () => {
    const { token } = await account();
    expect((await post('/auth/certificate/verify', token, { ephemeralKey: 'not base64!' })).json().message).toBe(operationErrors.ephemeralKeyInvalid);
    expect((await post('/auth/certificate/verify', token, { ephemeralKey: Buffer.alloc(32).toString('base64') })).json().message).toBe(operationErrors.ephemeralKeyWeak);
    const appUser = await appUserToken(sandbox, 'vouched-for');
    expect((await post('/auth/certificate', appUser, { ephemeralKey: raw(generateKeyPairSync('ed25519').publicKey) })).statusCode).toBe(200);
    expect((await post('/auth/certificate/verify', appUser, { ephemeralKey: raw(generateKeyPairSync('ed25519').publicKey) })).json().message).toBe(accountErrors.secondFactorNotNeeded);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/certificate/verify', payload: { ephemeralKey: raw(generateKeyPairSync('ed25519').publicKey) } })).statusCode).toBe(401);
  });

  it('a key certified through the code unlocks the owner’s lock', async () => {
    const owner = sandbox.owner;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    expect((await post('/auth/certificate', owner.token, { ephemeralKey: raw(publicKey) })).statusCode).toBe(423);
    await post('/auth/certificate/verify', owner.token, { ephemeralKey: raw(publicKey) });
    const code = await pendingKeyCode(t, owner.userId);
    const cert = (await post('/auth/certificate/check', owner.token, { verificationSignature: signCode(code, privateKey) })).json() as CertificateResponse;
    const lockId = await createLock(t, sandbox.applicationId);
    const holder = { token: owner.token, userId: cert.userId, chain: cert.certificateChain, privateKey, publicKey };
    const res = await execute(t, lockId, owner.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }));
    expect(res.statusCode, res.body).toBe(204);
    void share;
  });
});
