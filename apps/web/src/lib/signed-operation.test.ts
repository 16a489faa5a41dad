import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { getCertifiedKey } from './device-key';
import { memoryKeyStore } from './device-key-store';
import { base64, exportPublicKey, generateSigningKey, signOperation } from './signed-operation';

const fromB64Url = (part: string) => Buffer.from(part, 'base64url');
const decode = (part: string) => JSON.parse(fromB64Url(part).toString('utf8')) as Record<string, unknown>;
/** DER SPKI prefix of an Ed25519 public key (RFC 8410), to hand the raw key to Node's verifier. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

describe('signOperation', () => {
  it('signs a compact JWS that an independent Ed25519 verifier accepts, with the platform header and claims', async () => {
    const pair = await generateSigningKey();
    const jws = await signOperation({
      privateKey: pair.privateKey,
      certificateChain: ['TEVBRg==', 'Q0E='],
      userId: 'user-1',
      lockId: 'lock-1',
      operation: { type: 'MUTATE_LOCK', locked: false },
      nowMs: 1_700_000_000_500,
    });
    const [header, payload, signature] = jws.split('.') as [string, string, string];
    expect(jws).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(decode(header)).toEqual({ alg: 'EdDSA', typ: 'JWT', x5c: ['TEVBRg==', 'Q0E='] });
    const claims = decode(payload);
    expect(claims).toMatchObject({
      iss: 'user-1',
      sub: 'lock-1',
      nbf: 1_700_000_000,
      iat: 1_700_000_000,
      exp: 1_700_000_060,
      operation: { type: 'MUTATE_LOCK', locked: false },
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);

    const raw = Buffer.from(await exportPublicKey(pair.publicKey), 'base64');
    expect(raw).toHaveLength(32);
    const key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
      format: 'der',
      type: 'spki',
    });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, fromB64Url(signature))).toBe(true);
    // Another payload under the same signature does not verify: the signature covers the claims.
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'lock-2' })).toString('base64url');
    expect(verify(null, Buffer.from(`${header}.${forged}`), key, fromB64Url(signature))).toBe(false);
  });

  it('never lets an operation live longer than 60 s, and gives every operation its own jti', async () => {
    const { privateKey } = await generateSigningKey();
    const input = {
      privateKey,
      certificateChain: [],
      userId: 'u',
      lockId: 'l',
      operation: { type: 'MUTATE_LOCK', locked: false } as const,
    };
    const long = decode((await signOperation({ ...input, lifetimeS: 3600, nowMs: 0 })).split('.')[1]!);
    expect(long.exp).toBe(60);
    const short = decode((await signOperation({ ...input, lifetimeS: 10, nowMs: 0 })).split('.')[1]!);
    expect(short.exp).toBe(10);
    expect(long.jti).not.toBe(short.jti);
  });

  it('keeps the private key non-extractable', async () => {
    const { privateKey } = await generateSigningKey();
    expect(privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('pkcs8', privateKey)).rejects.toThrow();
  });

  it('encodes standard base64 with padding', () => {
    expect(base64(new Uint8Array([251, 255]))).toBe('+/8=');
  });
});

describe('getCertifiedKey', () => {
  const issued = (userId: string) => ({ certificateChain: [`leaf-of-${userId}`, 'ca'], userId });

  it('generates one key per user, certifies it once, and reuses both while the certificate is fresh', async () => {
    const store = memoryKeyStore();
    const certify = vi.fn(async (_key: string) => issued('app-user-1'));
    const first = await getCertifiedKey('owner-1', store, certify, { nowMs: 0 });
    const again = await getCertifiedKey('owner-1', store, certify, { nowMs: 1000 });
    expect(certify).toHaveBeenCalledTimes(1);
    expect(Buffer.from(certify.mock.calls[0]![0], 'base64')).toHaveLength(32);
    expect(again.privateKey).toBe(first.privateKey);
    expect(again).toMatchObject({ certificateChain: ['leaf-of-app-user-1', 'ca'], userId: 'app-user-1' });

    const other = await getCertifiedKey('owner-2', store, certify, { nowMs: 0 });
    expect(other.privateKey).not.toBe(first.privateKey);
    expect(certify).toHaveBeenCalledTimes(2);
  });

  it('registers the same key again once fewer than 7 of the 30 days are left, or when asked to renew', async () => {
    const store = memoryKeyStore();
    const certify = vi.fn(async (_key: string) => issued('u'));
    const first = await getCertifiedKey('owner', store, certify, { nowMs: 0 });
    const day = 24 * 60 * 60 * 1000;
    await getCertifiedKey('owner', store, certify, { nowMs: 22 * day });
    expect(certify).toHaveBeenCalledTimes(1);
    const renewed = await getCertifiedKey('owner', store, certify, { nowMs: 23 * day + 1 });
    expect(certify).toHaveBeenCalledTimes(2);
    expect(renewed.privateKey).toBe(first.privateKey);
    await getCertifiedKey('owner', store, certify, { nowMs: 23 * day + 2, renew: true });
    expect(certify).toHaveBeenCalledTimes(3);
    expect(new Set(certify.mock.calls.map((c) => c[0])).size).toBe(1);
  });

  it('keeps no certificate when the server refuses to issue one', async () => {
    const store = memoryKeyStore();
    const certify = vi.fn(async () => Promise.reject(new Error('refused')));
    await expect(getCertifiedKey('owner', store, certify)).rejects.toThrow('refused');
    expect((await store.get('owner'))?.certificate).toBeNull();
  });
});
