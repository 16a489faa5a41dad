import { generateKeyPairSync } from 'node:crypto';
import { count, eq } from 'drizzle-orm';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { loadConfig } from '../config.js';
import { signingKeys } from '../db/schema.js';
import { SecretBox } from './secret-box.js';
import { ensureSigningKey, retireExpiredKeys, rotateSigningKey } from './signing-keys.js';
import { TokenService } from './tokens.js';

/** The box the app under test seals its keys with. */
const boxOf = (t: TestApp) => new SecretBox(t.app.config.secretsEncryptionKey);

const claims = { sub: '7d0f4c1e-4d7e-4a53-9d0f-1a2b3c4d5e6f', email: 'a@example.com', sid: '0b8f5d8e-1f5e-4f9e-9b7a-2c3d4e5f6a7b' };

describe('signing keys in the database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('many instances starting at once create one active key', async () => {
    await Promise.all(Array.from({ length: 6 }, () => ensureSigningKey(t.app.db, boxOf(t), t.dataDir)));
    const [active] = await t.app.db.select({ n: count() }).from(signingKeys).where(eq(signingKeys.status, 'active'));
    expect(active!.n).toBe(1);
    const [all] = await t.app.db.select({ n: count() }).from(signingKeys);
    expect(all!.n).toBe(1);
  });

  it('every token names its key, and a second instance verifies it', async () => {
    const token = await t.app.tokens.signAccess(claims);
    expect(decodeProtectedHeader(token).kid).toBe(t.app.tokens.keys.signer().kid);
    const other = await t.secondInstance();
    try {
      expect(await other.app.tokens.verifyAccess(token)).toEqual(claims);
    } finally {
      await other.close();
    }
  });

  it('after a rotation: new tokens carry the new kid and verify everywhere, old ones verify until retired', async () => {
    const oldKid = t.app.tokens.keys.signer().kid;
    const oldRefresh = (await t.app.tokens.signRefresh({ sub: claims.sub, sid: claims.sid })).token;
    const other = await t.secondInstance();
    try {
      const rotated = await rotateSigningKey(t.app.db, boxOf(t), 3600);
      expect(rotated.previousKid).toBe(oldKid);
      // The other instance has not re-read yet: it still signs with the old key, which everyone accepts.
      expect(other.app.tokens.keys.signer().kid).toBe(oldKid);
      await t.app.tokens.keys.reload();
      const fresh = await t.app.tokens.signAccess(claims);
      expect(decodeProtectedHeader(fresh).kid).toBe(rotated.kid);
      // A kid it has never seen makes the other instance re-read the keys at once.
      expect(await other.app.tokens.verifyAccess(fresh)).toEqual(claims);
      expect(other.app.tokens.keys.signer().kid).toBe(rotated.kid);
      expect((await t.app.tokens.verifyRefresh(oldRefresh)).sid).toBe(claims.sid);
      expect(t.app.tokens.keys.jwks().map((k) => k.kid).sort()).toEqual([oldKid, rotated.kid].sort());
      const [previous] = await t.app.db.select().from(signingKeys).where(eq(signingKeys.kid, oldKid));
      expect(previous).toMatchObject({ status: 'previous', privateKey: null });
    } finally {
      await other.close();
    }
  });

  it('a previous key past its time is retired: its tokens are refused and it leaves the JWKS', async () => {
    const before = t.app.tokens.keys.signer().kid;
    const oldToken = (await t.app.tokens.signRefresh({ sub: claims.sub, sid: claims.sid })).token;
    await rotateSigningKey(t.app.db, boxOf(t), 0);
    expect(await retireExpiredKeys(t.app.db)).toBeGreaterThanOrEqual(1);
    await t.app.tokens.keys.reload();
    await expect(t.app.tokens.verifyRefresh(oldToken)).rejects.toThrow();
    expect(t.app.tokens.keys.jwks().map((k) => k.kid)).not.toContain(before);
    const [row] = await t.app.db.select().from(signingKeys).where(eq(signingKeys.kid, before));
    expect(row).toMatchObject({ status: 'retired', privateKey: null });
    expect(row!.retiredAt).toBeInstanceOf(Date);
  });

  it('GET /.well-known/jwks.json publishes the public keys only', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    const { keys } = res.json() as { keys: Record<string, string>[] };
    expect(keys.map((k) => k.kid)).toContain(t.app.tokens.keys.signer().kid);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(key.d).toBeUndefined();
    }
  });

  it('JWT_PRIVATE_KEY overrides the database: that key signs, the database keys are not used', async () => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const tokens = await TokenService.create(loadConfig({ DATA_DIR: t.dataDir, JWT_PRIVATE_KEY: pem }), t.app.db);
    expect(tokens.keys.source).toBe('env');
    const token = await tokens.signAccess(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
    await expect(t.app.tokens.verifyAccess(token)).rejects.toThrow();
  });

  it('private keys are sealed at rest when SECRETS_ENCRYPTION_KEY is set', async () => {
    const sealed = await createTestApp({ SECRETS_ENCRYPTION_KEY: 'z'.repeat(40) });
    try {
      const [row] = await sealed.app.db.select().from(signingKeys).where(eq(signingKeys.status, 'active'));
      expect(row!.privateKey).toMatch(/^enc:v1:/);
      expect(row!.privateKey).not.toContain('PRIVATE KEY');
      const token = await sealed.app.tokens.signAccess(claims);
      expect(await sealed.app.tokens.verifyAccess(token)).toEqual(claims);
    } finally {
      await sealed.close();
    }
  });
});
