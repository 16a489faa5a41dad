import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationErrors, type CertificateResponse } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { signingKeys } from '../../db/schema.js';
import { readEphemeralKey } from '../../plugins/platform-ca.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * /auth/certificate certifies only keys someone holds — never a small-order or
 * non-canonical Ed25519 point (a "signature" nobody made can verify against it), nor a key the platform
 * itself signs with — and only so many per user and hour. The operation verifier refuses a certificate
 * for a small-order key even if one was issued before.
 */
let t: TestApp;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestApp({ CERTIFICATE_RATE_LIMIT_MAX: '5' });
  sandbox = await createSandbox(t);
});
afterAll(() => t?.close());

const P = 2n ** 255n - 19n;
const ORDER_8_Y = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
const le = (y: bigint, sign = 0) => {
  const bytes = Buffer.from(y.toString(16).padStart(64, '0'), 'hex').reverse();
  bytes[31]! |= sign;
  return bytes;
};
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const request = (token: string, ephemeralKey: string) =>
  t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey } });
/** A user with a fresh budget of certificates: the limit is per user. */
let users = 0;
const freshUser = () => appUserToken(sandbox, `cert-user-${++users}`);

describe('POST /auth/certificate refuses keys no one holds', () => {
  it('the 14 small-order encodings libsodium blocks, as raw keys and as DER SPKI', async () => {
    const encodings = [0n, 1n, ORDER_8_Y, P - ORDER_8_Y, P - 1n, P, P + 1n].flatMap((y) => [le(y), le(y, 0x80)]);
    expect(encodings).toHaveLength(14);
    for (const [i, raw] of encodings.entries()) {
      const token = await freshUser();
      for (const ephemeralKey of [raw.toString('base64'), Buffer.concat([SPKI_PREFIX, raw]).toString('base64')]) {
        const res = await request(token, ephemeralKey);
        expect(res.statusCode, `encoding ${i}`).toBe(400);
        expect(res.json().message).toBe(operationErrors.ephemeralKeyWeak);
      }
    }
  });

  it('non-canonical encodings (y ≥ p) of points that are on the curve', async () => {
    let tried = 0;
    for (let y = P; y < 2n ** 255n; y++) {
      const raw = le(y);
      // Only what node would otherwise take counts here: an encoding that is not a point at all was already a 400.
      if (!readEphemeralKey(raw.toString('base64'))) continue;
      tried++;
      const res = await request(await freshUser(), raw.toString('base64'));
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(operationErrors.ephemeralKeyWeak);
    }
    expect(tried).toBeGreaterThan(0);
  });

  it('the platform CA’s own key and the keys that sign the portal’s tokens', async () => {
    const token = await freshUser();
    const good = (await request(token, generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64'))).json() as CertificateResponse;
    const ca = new X509Certificate(Buffer.from(good.certificateChain[1]!, 'base64'));
    const caKey = ca.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const [signing] = await t.database.db.select({ publicJwk: signingKeys.publicJwk }).from(signingKeys);
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as { keys: { x: string }[] };
    for (const ephemeralKey of [caKey, Buffer.from(signing!.publicJwk.x, 'base64url').toString('base64'), Buffer.from(jwks.keys[0]!.x, 'base64url').toString('base64')]) {
      const res = await request(token, ephemeralKey);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(operationErrors.ephemeralKeyReserved);
    }
  });

  it('at most CERTIFICATE_RATE_LIMIT_MAX certificates per user and window: then 429 with Retry-After', async () => {
    const token = await freshUser();
    const key = () => generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (let i = 0; i < 5; i++) expect((await request(token, key())).statusCode).toBe(200);
    const limited = await request(token, key());
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(60);
    // Another user's budget is their own.
    expect((await request(await freshUser(), key())).statusCode).toBe(200);
  });
});

describe('the operation verifier', () => {
  it('refuses a certificate for a small-order key even if one was issued before', async () => {
    const token = await freshUser();
    const holder = await certify(t, token);
    const lockId = await createLock(t, sandbox.applicationId);
    await share(t, lockId, holder.userId);
    const identity = readEphemeralKey(le(1n).toString('base64'))!;
    const chain = await t.app.platformCa.issue(holder.userId, identity);
    // The trivial "signature" for the identity point: R = identity, S = 0.
    const jws = signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }, { x5c: chain });
    const [head, body] = jws.split('.');
    const forged = `${head}.${body}.${Buffer.concat([le(1n), Buffer.alloc(32)]).toString('base64url')}`;
    const res = await execute(t, lockId, token, forged);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe(operationErrors.certificateKeyWeak);
  });
});
