import { sql } from 'drizzle-orm';
import { ed25519KeyProblem, operationErrors, type CertificateResponse } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { signingKeys } from '../../db/schema.js';
import { badRequest } from '../../errors.js';
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
 * Only a key someone holds is certified (issue 26): not a small-order or non-canonical point, which no
 * private key belongs to and which "signatures" nobody made can verify against, and not a key the platform
 * itself signs with (the CA's, or any token signing key it ever had), whose certificate could pass its
 * signatures off as a user's. Limited per user (CERTIFICATE_RATE_LIMIT_MAX, certificates.routes.ts).
 */
export async function issueCertificate({ ca, db, tokenKeys }: CertificateIssuer, user: LockUser, ephemeralKey: string): Promise<CertificateResponse> {
  const key = readEphemeralKey(ephemeralKey);
  if (!key) throw badRequest(operationErrors.ephemeralKeyInvalid);
  const x = ed25519X(key);
  if (ed25519KeyProblem(Buffer.from(x, 'base64url'))) throw badRequest(operationErrors.ephemeralKeyWeak);
  if (await isPlatformKey({ ca, db, tokenKeys }, x)) throw badRequest(operationErrors.ephemeralKeyReserved);
  return { certificateChain: await ca.issue(user.id, key), userId: user.id };
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
