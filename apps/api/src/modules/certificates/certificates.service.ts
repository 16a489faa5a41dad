import type { KeyObject } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { accountErrors, ed25519KeyProblem, operationErrors, type CertificateResponse } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { certifiedKeys, sessions, signingKeys, users } from '../../db/schema.js';
import { AppError, badRequest } from '../../errors.js';
import { ed25519X, readEphemeralKey, type PlatformCa } from '../../plugins/platform-ca.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';

export interface CertificateIssuer {
  ca: PlatformCa;
  db: Db;
  /** The public keys the portal's own tokens are signed and verified with now (JWT_PRIVATE_KEY's included). */
  tokenKeys: () => { x?: string }[];
}

/**
 * POST /auth/certificate: the caller's ephemeral Ed25519 key, certified for about 30 days. The key arrives
 * as the SDKs send it (raw 32 bytes from libsodium or DER SPKI from the JVM, in standard base64); the leaf
 * names the caller's user id, which the operations they sign must carry as `iss`.
 *
 * Only a key someone holds is certified: not a small-order or non-canonical point, which no
 * private key belongs to and which "signatures" nobody made can verify against, and not a key the platform
 * itself signs with (the CA's, or any token signing key it ever had), whose certificate could pass its
 * signatures off as a user's. Limited per user (CERTIFICATE_RATE_LIMIT_MAX, certificates.routes.ts).
 */
export async function issueCertificate(
  { ca, db, tokenKeys }: CertificateIssuer,
  user: LockUser,
  ephemeralKey: string,
  secondFactor: { sessionId?: string } = {},
): Promise<CertificateResponse> {
  const { key, x } = await checkEphemeralKey({ ca, db, tokenKeys }, ephemeralKey);
  // A password alone does not certify a new key for a portal account (key-verification.ts).
  if (user.kind === 'portal' && !(await keyProved(db, user.id, x, secondFactor.sessionId))) throw new AppError(423, accountErrors.secondFactorRequired);
  return certify({ ca, db }, user, key);
}

/** The chain certifying `key` for the user: a portal account's leaf starts no earlier than its certifiedAfter. */
export async function certify({ ca, db }: Pick<CertificateIssuer, 'ca' | 'db'>, user: LockUser, key: KeyObject): Promise<CertificateResponse> {
  let earliest: number | null = null;
  if (user.kind === 'portal') {
    const [row] = await db.select({ certifiedAfter: users.certifiedAfter }).from(users).where(eq(users.id, user.id)).limit(1);
    earliest = row?.certifiedAfter?.getTime() ?? null;
  }
  return { certificateChain: await ca.issue(user.id, key, Date.now(), earliest), userId: user.id };
}

/**
 * Ends every certificate the portal user holds now (a password reset or change): their certifiedAfter moves
 * to this moment less 30 seconds (room for instances' clocks that differ), in whole seconds. Certificates
 * are backdated by a minute, so every earlier one starts before it: the platform refuses operations signed
 * under them at once (operations.service.ts, standing.ts), and the trigger on users.certified_after has the
 * configs of the applications they own published again, so every device refuses them from its next config.
 * Later certificates start no earlier than it (`certify`), so it moves on by at least a second each time:
 * a certificate issued since the last time, starting at that certifiedAfter, ends too. Run it in the
 * transaction that makes the change.
 */
export async function endEarlierCertificates(tx: Db, userId: string): Promise<void> {
  await tx
    .update(users)
    .set({ certifiedAfter: sql`greatest(date_trunc('second', now() - interval '30 seconds'), ${users.certifiedAfter} + interval '1 second')` })
    .where(eq(users.id, userId));
}

/** The key as the SDKs send it, refused (400) unless someone can hold it. */
export async function checkEphemeralKey({ ca, db, tokenKeys }: CertificateIssuer, ephemeralKey: string): Promise<{ key: KeyObject; x: string }> {
  const key = readEphemeralKey(ephemeralKey);
  if (!key) throw badRequest(operationErrors.ephemeralKeyInvalid);
  const x = ed25519X(key);
  if (ed25519KeyProblem(Buffer.from(x, 'base64url'))) throw badRequest(operationErrors.ephemeralKeyWeak);
  if (await isPlatformKey({ ca, db, tokenKeys }, x)) throw badRequest(operationErrors.ephemeralKeyReserved);
  return { key, x };
}

/**
 * A portal user's key is certified without a new code when it was proved before (certified_keys), or when
 * the session asking signed in with a passkey — then the key is recorded as proved.
 */
async function keyProved(db: Db, userId: string, x: string, sessionId: string | undefined): Promise<boolean> {
  const [known] = await db
    .select({ x: certifiedKeys.keyX })
    .from(certifiedKeys)
    .where(and(eq(certifiedKeys.userId, userId), eq(certifiedKeys.keyX, x)))
    .limit(1);
  if (known) return true;
  if (!sessionId) return false;
  const [session] = await db.select({ secondFactor: sessions.secondFactor }).from(sessions).where(eq(sessions.id, sessionId)).limit(1);
  if (!session?.secondFactor) return false;
  await db.insert(certifiedKeys).values({ userId, keyX: x }).onConflictDoNothing();
  return true;
}

/** The CA's key, a token key in use, or any signing key the database has held (retired ones too). */
async function isPlatformKey({ ca, db, tokenKeys }: CertificateIssuer, x: string): Promise<boolean> {
  if (x === ca.publicKeyX || tokenKeys().some((k) => k.x === x)) return true;
  const [row] = await db
    .select({ kid: signingKeys.kid })
    .from(signingKeys)
    .where(sql`${signingKeys.publicJwk}->>'x' = ${x}`)
    .limit(1);
  return row !== undefined;
}
