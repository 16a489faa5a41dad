import { X509Certificate, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERTIFICATE_MIN_REMAINING_DAYS, type CertificateResponse } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { appUserToken, createLock, createSandbox, lockRow, logOf, share, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * The platform's public SDKs, as they build their requests (read from doordeck/doordeck-sdk-javascript
 * and doordeck/doordeck-headless-sdk; rebuilt here, not copied), must work unchanged:
 * - the JavaScript SDK: a libsodium key pair, the raw 32-byte public key in standard base64; its JWS has
 *   standard base64 segments with padding over `{alg, typ, x5c}` and claims without jti, sent bare with
 *   Content-Type application/json; lock() sends no duration.
 * - the headless (Kotlin) SDK on the JVM: the DER SPKI public key (44 bytes) in standard base64; its JWS
 *   header is `{"alg","x5c","type"}` (type, not typ), its claims carry a jti and every field it does
 *   not set as null; Content-Type application/jwt. Before signing it checks that the first certificate
 *   of the chain has at least 7 days left.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 8 });
});
afterAll(() => t?.close());

const standard = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');

async function registerKey(token: string, publicKey: Buffer): Promise<CertificateResponse> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/auth/certificate',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ ephemeralKey: standard(publicKey) }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as CertificateResponse;
}

/** header.payload.signature, each in standard base64, the signature over the two encoded segments. */
function standardJws(headerJson: string, payloadJson: string, privateKey: KeyObject): string {
  const message = `${standard(headerJson)}.${standard(payloadJson)}`;
  return `${message}.${standard(sign(null, Buffer.from(message), privateKey))}`;
}

const post = (token: string, body: string, contentType: string) =>
  t.app.inject({ method: 'POST', url: `/api/device/${lockId}/execute`, headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, payload: body });

describe('the JavaScript SDK', () => {
  it('registers its libsodium key and unlocks, locks and changes the unlock time', async () => {
    const token = await appUserToken(sandbox, 'js-sdk-user');
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const rawPublicKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    expect(rawPublicKey).toHaveLength(32);
    const cert = await registerKey(token, rawPublicKey);
    await share(t, lockId, cert.userId, { role: 'ADMIN' });

    const signer = (operation: unknown) => {
      const now = Math.floor(Date.now() / 1000);
      const header = JSON.stringify({ alg: 'EdDSA', typ: 'JWT', x5c: cert.certificateChain });
      return standardJws(header, JSON.stringify({ iss: cert.userId, sub: lockId, nbf: now, iat: now, exp: now + 60, operation }), privateKey);
    };
    const unlock = await post(token, signer({ type: 'MUTATE_LOCK', locked: false, duration: 7 }), 'application/json');
    expect(unlock.statusCode, unlock.body).toBe(204);
    expect((await lockRow(t, lockId)).unlockedUntil).not.toBeNull();
    expect((await post(token, signer({ type: 'MUTATE_LOCK', locked: true }), 'application/json')).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockedUntil).toBeNull();
    expect((await post(token, signer({ type: 'MUTATE_SETTING', unlockDuration: parseInt('9') }), 'application/json')).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockTime).toBe(9);
    expect((await logOf(t, sandbox, lockId)).slice(0, 3).map((e) => [e.type, e.rejected])).toEqual([['SETTINGS', false], ['LOCK', false], ['UNLOCK', false]]);
  });
});

describe('the headless SDK (JVM)', () => {
  it('registers its DER key, finds the leaf good for 7 days, and unlocks with a jti', async () => {
    const token = await appUserToken(sandbox, 'kmp-user');
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ format: 'der', type: 'spki' });
    expect(der).toHaveLength(44);
    const cert = await registerKey(token, der);
    await share(t, lockId, cert.userId, { role: 'ADMIN' });

    const leaf = new X509Certificate(Buffer.from(cert.certificateChain[0]!, 'base64'));
    expect(Date.parse(leaf.validTo) - CERTIFICATE_MIN_REMAINING_DAYS * 86_400_000).toBeGreaterThan(Date.now());

    const perform = (operation: Record<string, unknown>) => {
      const now = Math.floor(Date.now() / 1000);
      // kotlinx.serialization with encodeDefaults: declaration order, class discriminator first, nulls written.
      const header = `{"alg":"EdDSA","x5c":${JSON.stringify(cert.certificateChain)},"type":"JWT"}`;
      const body = `{"iss":"${cert.userId}","sub":"${lockId}","nbf":${now},"iat":${now},"exp":${now + 60},"jti":"${randomUUID()}","operation":${JSON.stringify(operation)}}`;
      return post(token, standardJws(header, body, privateKey), 'application/jwt');
    };
    const unlock = await perform({ type: 'MUTATE_LOCK', locked: false });
    expect(unlock.statusCode, unlock.body).toBe(204);
    const until = (await lockRow(t, lockId)).unlockedUntil!.getTime() - Date.now();
    expect(until).toBeGreaterThan(0);

    const friend = await appUserToken(sandbox, 'kmp-friend');
    const friendCert = await registerKey(friend, generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }));
    const added = await perform({ type: 'ADD_USER', user: friendCert.userId, publicKey: standard('key'), role: null, start: null, end: null });
    expect(added.statusCode, added.body).toBe(204);
    expect((await perform({ type: 'MUTATE_SETTING', unlockDuration: 11, unlockBetween: null })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockTime).toBe(11);
    expect((await perform({ type: 'REMOVE_USER', users: [friendCert.userId] })).statusCode).toBe(204);
    const types = (await logOf(t, sandbox, lockId)).slice(0, 4).map((e) => `${e.type}${e.rejected ? ' (rejected)' : ''}`);
    expect(types).toEqual(['REVOKE', 'SETTINGS', 'SHARE', 'UNLOCK']);
  });
});
