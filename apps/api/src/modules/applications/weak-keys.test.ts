import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages, type Application } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/**
 * POST /auth/key refuses keys nobody should trust — an RSA exponent of 1 (every
 * "signature" verifies), EC points off the curve, small-order Ed25519 points, an `alg` that does not fit
 * the key, a key already expired, a kid that breaks a line — with 400 and the contract's message, and
 * stores nothing. Each key is read by the crypto library before it is stored.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let appId: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  appId = await createApplication(t, owner.userId);
});
afterAll(() => t?.close());

const postKey = (jwk: object) => t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/key`, headers: bearer(owner.token), payload: jwk });
const storedKids = async () =>
  Object.keys(((await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}`, headers: bearer(owner.token) })).json() as Application).authKeys);
const b64u = (bytes: Uint8Array | number[]) => Buffer.from(bytes).toString('base64url');
const jwkOf = (type: 'rsa' | 'ec' | 'ed25519', options: object = {}) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node's overloads need a literal type per call
  (generateKeyPairSync(type as any, options as any) as unknown as { publicKey: KeyObject }).publicKey.export({ format: 'jwk' }) as Record<string, string>;
const now = () => Math.floor(Date.now() / 1000);
let n = 0;

async function expectRefused(jwk: Record<string, unknown>, message: string) {
  const kid = (jwk.kid as string | undefined) ?? `weak-${++n}`;
  const res = await postKey({ ...jwk, kid });
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ message });
  expect(await storedKids()).not.toContain(kid);
}

describe('POST /auth/key refuses weak keys', () => {
  it('RSA with e = 1, an even exponent, or fewer than 2048 bits', async () => {
    const rsa = jwkOf('rsa', { modulusLength: 2048 });
    await expectRefused({ ...rsa, e: 'AQ' }, messages.keyRsaExponent);
    await expectRefused({ ...rsa, e: b64u([0x01, 0x00, 0x00]) }, messages.keyRsaExponent);
    await expectRefused(jwkOf('rsa', { modulusLength: 1024 }), messages.keyRsaTooShort);
  });

  it('EC points off the curve', async () => {
    for (const namedCurve of ['P-256', 'P-384', 'P-521']) {
      const ec = jwkOf('ec', { namedCurve });
      const y = Buffer.from(ec.y!, 'base64url');
      y[y.length - 1]! ^= 1;
      await expectRefused({ ...ec, y: b64u(y) }, messages.keyEcPoint);
    }
  });

  it('small-order and non-canonical Ed25519 points', async () => {
    const p = 2n ** 255n - 19n;
    const le = (v: bigint) => Buffer.from(v.toString(16).padStart(64, '0'), 'hex').reverse();
    for (const x of [Buffer.alloc(32), le(1n), le(p - 1n), le(p + 1n)])
      await expectRefused({ kty: 'OKP', crv: 'Ed25519', x: b64u(x) }, messages.keyOkpPoint);
  });

  it('an alg that does not fit the key, or is not on the list', async () => {
    await expectRefused({ ...jwkOf('ec', { namedCurve: 'P-256' }), alg: 'ES512' }, messages.keyAlgMismatch);
    await expectRefused({ ...jwkOf('rsa', { modulusLength: 2048 }), alg: 'EdDSA' }, messages.keyAlgMismatch);
    await expectRefused({ ...jwkOf('ed25519'), alg: 'HS256' }, messages.keyAlgUnknown);
  });

  it('a key whose exp has passed', async () => {
    await expectRefused({ ...jwkOf('ed25519'), exp: now() - 1 }, messages.keyExpired);
  });

  it('a kid with a line break, spaces or code-comment characters', async () => {
    for (const kid of ['k\nconsole.log(1)', 'k 1', '*/ alert(1) /*', 'k\u2028x'])
      await expectRefused({ ...jwkOf('ed25519'), kid }, messages.keyKidInvalid);
    // NUL may be refused before the key rules run (any body's control characters); refused either way.
    expect((await postKey({ ...jwkOf('ed25519'), kid: 'k\u0000x' })).statusCode).toBe(400);
  });

  it('still stores sound keys of every kind', async () => {
    const keys = [
      { ...jwkOf('rsa', { modulusLength: 2048 }), alg: 'PS256' },
      { ...jwkOf('rsa', { modulusLength: 3072 }), e: b64u([3]) },
      { ...jwkOf('ec', { namedCurve: 'P-256' }), alg: 'ES256' },
      { ...jwkOf('ec', { namedCurve: 'P-384' }) },
      { ...jwkOf('ec', { namedCurve: 'P-521' }), alg: 'ES512' },
      { ...jwkOf('ec', { namedCurve: 'secp256k1' }), alg: 'ES256K' },
      { ...jwkOf('ed25519'), alg: 'EdDSA', exp: now() + 3600 },
    ];
    for (const [i, key] of keys.entries()) {
      const res = await postKey({ ...key, kid: `good-${i}` });
      expect(res.statusCode, res.body).toBe(204);
    }
    expect(await storedKids()).toEqual(expect.arrayContaining(keys.map((_, i) => `good-${i}`)));
  });
});
