import { createPublicKey, randomInt, verify } from 'node:crypto';
import { and, desc, eq, isNull, lt } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { accountErrors, KEY_CODE_MAX_ATTEMPTS, KEY_CODE_TTL_MINUTES, type CertificateResponse, type Language } from '@latchkey/contract';
import { accountTokens, certifiedKeys, users } from '../../db/schema.js';
import { badRequest } from '../../errors.js';
import { refuseWrongCode } from '../../lib/code-tries.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { PURPOSE, sendAccountEmail } from '../account/account-trust.service.js';
import { certify, checkEphemeralKey, type CertificateIssuer } from './certificates.service.js';

/**
 * A second factor for new keys — the flow the platform's SDKs drive:
 * `POST /auth/certificate` answers 423 for a key a portal account has not proved; `POST
 * /auth/certificate/verify?method=EMAIL {ephemeralKey}` emails a six-digit code and answers `{method:
 * "EMAIL"}`; `POST /auth/certificate/check {verificationSignature}` — the code's UTF-8 bytes signed with the
 * new key's private key (libsodium crypto_sign_detached), standard base64 — answers the certificate chain.
 * A code is for one key, lives 10 minutes, takes 5 wrong tries; asking again replaces it.
 */
export async function requestKeyCode(app: FastifyInstance, issuer: CertificateIssuer, user: LockUser, ephemeralKey: string, language: Language): Promise<{ method: 'EMAIL' }> {
  if (user.kind !== 'portal') throw badRequest(accountErrors.secondFactorNotNeeded);
  const { x } = await checkEphemeralKey(issuer, ephemeralKey);
  const [account] = await app.db.select({ email: users.email }).from(users).where(eq(users.id, user.id)).limit(1);
  if (!account) throw badRequest(accountErrors.codeNotPending);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await app.db.transaction(async (tx) => {
    await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.userId, user.id), eq(accountTokens.purpose, PURPOSE.keyCode), isNull(accountTokens.usedAt)));
    await tx.insert(accountTokens).values({
      userId: user.id,
      purpose: PURPOSE.keyCode,
      sealedCode: app.keyCodes.seal(code),
      keyX: x,
      expiresAt: new Date(Date.now() + KEY_CODE_TTL_MINUTES * 60_000),
    });
  });
  await sendAccountEmail(app, account.email, { kind: 'keyCode', code, minutes: KEY_CODE_TTL_MINUTES }, language);
  return { method: 'EMAIL' };
}

/** Standard base64 as the SDKs send it (base64url tolerated); a 64-byte Ed25519 signature or null. */
function readSignature(value: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 64 ? bytes : null;
}

export async function checkKeyCode(app: FastifyInstance, issuer: CertificateIssuer, user: LockUser, verificationSignature: string): Promise<CertificateResponse> {
  if (user.kind !== 'portal') throw badRequest(accountErrors.secondFactorNotNeeded);
  const [pending] = await app.db
    .select()
    .from(accountTokens)
    .where(and(eq(accountTokens.userId, user.id), eq(accountTokens.purpose, PURPOSE.keyCode), isNull(accountTokens.usedAt)))
    .orderBy(desc(accountTokens.createdAt))
    .limit(1);
  if (!pending?.keyX || !pending.sealedCode) throw badRequest(accountErrors.codeNotPending);
  if (pending.expiresAt.getTime() <= Date.now()) throw badRequest(accountErrors.codeExpired);
  if (pending.attempts >= KEY_CODE_MAX_ATTEMPTS) throw badRequest(accountErrors.codeTooManyTries);

  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pending.keyX }, format: 'jwk' });
  const signature = readSignature(verificationSignature);
  const code = app.keyCodes.open(pending.sealedCode);
  if (!signature || !verify(null, Buffer.from(code, 'utf8'), publicKey, signature)) {
    return refuseWrongCode(app.db, pending.id, accountErrors.codeWrong);
  }
  const spent = await app.db.transaction(async (tx) => {
    const [row] = await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.id, pending.id), isNull(accountTokens.usedAt), lt(accountTokens.attempts, KEY_CODE_MAX_ATTEMPTS)))
      .returning({ id: accountTokens.id });
    if (!row) return false;
    await tx.insert(certifiedKeys).values({ userId: user.id, keyX: pending.keyX! }).onConflictDoNothing();
    return true;
  });
  if (!spent) throw badRequest(accountErrors.codeNotPending);
  const { key } = await checkEphemeralKey(issuer, Buffer.from(pending.keyX, 'base64url').toString('base64'));
  return certify(issuer, user, key);
}
