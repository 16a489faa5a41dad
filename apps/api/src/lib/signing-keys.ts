import fs from 'node:fs';
import path from 'node:path';
import { and, eq, gt, isNull, lte, or, sql } from 'drizzle-orm';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8 } from 'jose';
import type { Db } from '../db/client.js';
import { signingKeys } from '../db/schema.js';
import type { SecretBox } from './secret-box.js';

export const ALG = 'EdDSA';
/** The key file of versions before keys lived in the database: imported once, so nobody is logged out. */
export const LEGACY_KEY_FILE = 'jwt-signing-key.pem';
/** Held (per transaction) while the first key is created or a rotation runs: they take turns. */
const KEYS_LOCK_ID = 727_274_002;

export interface StoredKey {
  kid: string;
  status: 'active' | 'previous';
  publicJwk: { kty: string; crv: string; x: string };
  /** PKCS#8 PEM of the active key; undefined for the others (only the signer needs it). */
  privatePem?: string;
  verifyUntil: Date | null;
}

/** A new Ed25519 key (or the given PEM's) with its thumbprint as kid. */
async function keyMaterial(pem?: string) {
  const privateKey = pem
    ? await importPKCS8(pem, ALG, { extractable: true })
    : (await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true })).privateKey;
  const { kty, crv, x } = await exportJWK(privateKey);
  const publicJwk = { kty: kty!, crv: crv!, x: x! };
  return { kid: await calculateJwkThumbprint(publicJwk), publicJwk, pem: pem ?? (await exportPKCS8(privateKey)) };
}

/**
 * Makes sure there is an active key: the first instance to start creates it (from the data directory's
 * old key file when there is one), under a transaction-scoped advisory lock, so a second instance starting
 * at the same moment waits and then finds it instead of creating another. Also retires keys past their time.
 */
export async function ensureSigningKey(db: Db, box: SecretBox, dataDir: string): Promise<void> {
  await retireExpiredKeys(db);
  const [active] = await db.select({ kid: signingKeys.kid }).from(signingKeys).where(eq(signingKeys.status, 'active'));
  if (active) return;
  const legacyFile = path.join(dataDir, LEGACY_KEY_FILE);
  const material = await keyMaterial(fs.existsSync(legacyFile) ? fs.readFileSync(legacyFile, 'utf8') : undefined);
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${KEYS_LOCK_ID})`);
    const [winner] = await tx.select({ kid: signingKeys.kid }).from(signingKeys).where(eq(signingKeys.status, 'active'));
    if (winner) return;
    await tx.insert(signingKeys).values({ kid: material.kid, status: 'active', publicJwk: material.publicJwk, privateKey: box.seal(material.pem) });
  });
}

/**
 * Rotation: a new key signs from now on; the one it replaces keeps verifying for `verifyForSeconds` (the
 * longest a token it signed can live), then is retired. Instances pick the change up on their next refresh.
 */
export async function rotateSigningKey(db: Db, box: SecretBox, verifyForSeconds: number): Promise<{ kid: string; previousKid: string | null; verifyUntil: Date }> {
  await retireExpiredKeys(db);
  const material = await keyMaterial();
  const verifyUntil = new Date(Date.now() + verifyForSeconds * 1000);
  const previousKid = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${KEYS_LOCK_ID})`);
    const [old] = await tx
      .update(signingKeys)
      .set({ status: 'previous', verifyUntil, privateKey: null })
      .where(eq(signingKeys.status, 'active'))
      .returning({ kid: signingKeys.kid });
    await tx.insert(signingKeys).values({ kid: material.kid, status: 'active', publicJwk: material.publicJwk, privateKey: box.seal(material.pem) });
    return old?.kid ?? null;
  });
  return { kid: material.kid, previousKid, verifyUntil };
}

/** Previous keys whose tokens have all expired: retired, and their private part (if any) erased. */
export async function retireExpiredKeys(db: Db): Promise<number> {
  const retired = await db
    .update(signingKeys)
    .set({ status: 'retired', retiredAt: new Date(), privateKey: null })
    .where(and(eq(signingKeys.status, 'previous'), lte(signingKeys.verifyUntil, new Date())))
    .returning({ kid: signingKeys.kid });
  return retired.length;
}

/** The keys that sign or still verify, the active one with its private part opened. */
export async function loadSigningKeys(db: Db, box: SecretBox): Promise<StoredKey[]> {
  const rows = await db
    .select()
    .from(signingKeys)
    .where(
      or(
        eq(signingKeys.status, 'active'),
        and(eq(signingKeys.status, 'previous'), or(isNull(signingKeys.verifyUntil), gt(signingKeys.verifyUntil, new Date()))),
      ),
    );
  return rows.map((r) => ({
    kid: r.kid,
    status: r.status as StoredKey['status'],
    publicJwk: r.publicJwk,
    privatePem: r.status === 'active' && r.privateKey ? box.open(r.privateKey) : undefined,
    verifyUntil: r.verifyUntil,
  }));
}
