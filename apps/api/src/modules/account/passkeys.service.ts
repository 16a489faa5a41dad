import { randomInt, timingSafeEqual } from 'node:crypto';
import { and, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import {
  accountErrors,
  KEY_CODE_MAX_ATTEMPTS,
  KEY_CODE_TTL_MINUTES,
  passkeyErrors,
  type AuthResponse,
  type Language,
  type Passkey,
  type PasskeyResponse,
} from '@latchkey/contract';
import { accountTokens, passkeys, sessions, users, webauthnChallenges } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound, unauthorized } from '../../errors.js';
import { refuseWrongCode } from '../../lib/code-tries.js';
import { createSession } from '../../lib/sessions.js';
import { afterReply, PURPOSE, sendAccountEmail } from './account-trust.service.js';

type App = FastifyInstance;
const CHALLENGE_TTL_MS = 5 * 60_000;
const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** The relying party: PUBLIC_URL's host and origin. */
function relyingParty(app: App) {
  const url = new URL(app.config.publicUrl);
  return { rpID: url.hostname, origin: url.origin };
}

/** The challenge a response answers, read from its clientDataJSON (null when that is not readable). */
function challengeOf(response: PasskeyResponse): string | null {
  try {
    const data = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' && data.challenge.length <= 1024 ? data.challenge : null;
  } catch {
    return null;
  }
}

async function storeChallenge(app: App, challenge: string, purpose: 'register', userId: string) {
  await app.db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, sql`now()`));
  await app.db.insert(webauthnChallenges).values({ challenge, purpose, userId, expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS) });
}

/** Spends the challenge once (a replayed response finds it gone); null when it was never ours, used or expired. */
async function spendChallenge(app: App, challenge: string | null, purpose: 'register', userId: string): Promise<boolean> {
  if (!challenge) return false;
  const spent = await app.db
    .delete(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.challenge, challenge),
        eq(webauthnChallenges.purpose, purpose),
        gt(webauthnChallenges.expiresAt, sql`now()`),
        eq(webauthnChallenges.userId, userId),
      ),
    )
    .returning({ challenge: webauthnChallenges.challenge });
  return spent.length === 1;
}

const toPasskey = (row: typeof passkeys.$inferSelect): Passkey => ({ id: row.id, name: row.name, createdAt: seconds(row.createdAt)!, lastUsedAt: seconds(row.lastUsedAt) });

export async function listPasskeys(app: App, userId: string): Promise<Passkey[]> {
  const rows = await app.db.select().from(passkeys).where(eq(passkeys.userId, userId));
  return rows.map(toPasskey).sort((a, b) => b.createdAt - a.createdAt);
}

// ---------------------------------------------------------------------------------------------------------
// The second factor for adding a passkey

const PASSKEY_CODE = PURPOSE.passkeyCode;

/** Did this session sign in with a passkey (the second factor already)? */
export async function sessionHasSecondFactor(app: App, sessionId: string): Promise<boolean> {
  const [row] = await app.db.select({ secondFactor: sessions.secondFactor }).from(sessions).where(eq(sessions.id, sessionId)).limit(1);
  return row?.secondFactor === true;
}

/** A fresh six-digit code by email (older ones stop working): 10 minutes, 5 wrong tries, as for a new key. */
async function sendPasskeyCode(app: App, userId: string, language: Language): Promise<void> {
  const [account] = await app.db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  if (!account) throw unauthorized();
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await app.db.transaction(async (tx) => {
    await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.userId, userId), eq(accountTokens.purpose, PASSKEY_CODE), isNull(accountTokens.usedAt)));
    await tx.insert(accountTokens).values({
      userId,
      purpose: PASSKEY_CODE,
      sealedCode: app.keyCodes.seal(code),
      expiresAt: new Date(Date.now() + KEY_CODE_TTL_MINUTES * 60_000),
    });
  });
  await sendAccountEmail(app, account.email, { kind: 'passkeyCode', code, minutes: KEY_CODE_TTL_MINUTES }, language);
}

/** Spends the account's pending passkey code if `code` is it; a wrong one counts a try (the fifth spends it). */
async function spendPasskeyCode(app: App, userId: string, code: string): Promise<void> {
  const [pending] = await app.db
    .select()
    .from(accountTokens)
    .where(and(eq(accountTokens.userId, userId), eq(accountTokens.purpose, PASSKEY_CODE), isNull(accountTokens.usedAt)))
    .orderBy(desc(accountTokens.createdAt))
    .limit(1);
  if (!pending?.sealedCode) throw badRequest(passkeyErrors.codeNotPending);
  if (pending.expiresAt.getTime() <= Date.now()) throw badRequest(accountErrors.codeExpired);
  if (pending.attempts >= KEY_CODE_MAX_ATTEMPTS) throw badRequest(accountErrors.codeTooManyTries);
  const expected = Buffer.from(app.keyCodes.open(pending.sealedCode), 'utf8');
  const given = Buffer.from(code, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return refuseWrongCode(app.db, pending.id, passkeyErrors.codeWrong);
  }
  // One UPDATE: of two uses at once, one wins.
  const spent = await app.db
    .update(accountTokens)
    .set({ usedAt: new Date() })
    .where(and(eq(accountTokens.id, pending.id), isNull(accountTokens.usedAt), gt(accountTokens.expiresAt, sql`now()`), lt(accountTokens.attempts, KEY_CODE_MAX_ATTEMPTS)))
    .returning({ id: accountTokens.id });
  if (spent.length === 0) throw badRequest(passkeyErrors.codeNotPending);
}

/**
 * A passkey is a second factor (its sign-in certifies new keys without a code), so adding one needs one too:
 * a session that signed in with a passkey, or the six-digit code emailed to the account. Asked without a
 * code, a password session gets the code by email and a 423; with the right code, the options.
 */
export async function secondFactorForNewPasskey(app: App, user: { id: string; sessionId: string }, code: string | undefined, language: Language): Promise<void> {
  if (await sessionHasSecondFactor(app, user.sessionId)) return;
  if (code === undefined) {
    await sendPasskeyCode(app, user.id, language);
    throw new AppError(423, passkeyErrors.codeSent);
  }
  await spendPasskeyCode(app, user.id, code);
}

export async function registrationOptions(app: App, userId: string) {
  const [user] = await app.db.select({ email: users.email, displayName: users.displayName }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw unauthorized();
  const existing = await app.db.select({ id: passkeys.id, transports: passkeys.transports }).from(passkeys).where(eq(passkeys.userId, userId));
  const options = await generateRegistrationOptions({
    rpName: 'Latchkey',
    rpID: relyingParty(app).rpID,
    userName: user.email,
    userDisplayName: user.displayName ?? user.email,
    userID: Buffer.from(userId.replace(/-/g, ''), 'hex'),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
  await storeChallenge(app, options.challenge, 'register', userId);
  return options;
}

export async function registerPasskey(app: App, userId: string, response: PasskeyResponse, name: string | undefined): Promise<Passkey> {
  const challenge = challengeOf(response);
  if (!(await spendChallenge(app, challenge, 'register', userId))) throw badRequest(passkeyErrors.challengeUsed);
  const { rpID, origin } = relyingParty(app);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: response as unknown as RegistrationResponseJSON,
      expectedChallenge: challenge!,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch {
    throw badRequest(passkeyErrors.invalid);
  }
  if (!verified.verified) throw badRequest(passkeyErrors.invalid);
  const { credential } = verified.registrationInfo;
  const count = (await app.db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId))).length;
  const [row] = await app.db
    .insert(passkeys)
    .values({
      id: credential.id,
      userId,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: (credential.transports ?? []).slice(0, 10),
      name: name?.trim() || `Passkey ${count + 1}`,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict(passkeyErrors.exists);
  return toPasskey(row);
}

/** "A passkey was added": to the account's address, after the answer (a mailer failure is logged, the passkey stays). */
export function noticePasskeyAdded(app: App, userId: string, passkey: Passkey, language: Language): void {
  afterReply(app, async () => {
    const [user] = await app.db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    if (!user) return;
    await sendAccountEmail(app, user.email, { kind: 'passkeyAdded', name: passkey.name, url: `${app.config.publicUrl}/account` }, language);
  });
}

/**
 * Removes one of the account's passkeys. A session's passkey sign-in is its second factor only while that
 * passkey is the account's: the sessions do not record which passkey signed them in, so every session of
 * the account that signed in with one loses the second factor with it (a new key then needs the emailed
 * code, or a new passkey sign-in); keys proved before stay proved.
 */
export async function removePasskey(app: App, userId: string, passkeyId: string): Promise<void> {
  await app.db.transaction(async (tx) => {
    const removed = await tx.delete(passkeys).where(and(eq(passkeys.id, passkeyId), eq(passkeys.userId, userId))).returning({ id: passkeys.id });
    if (removed.length === 0) throw notFound(passkeyErrors.notFound);
    await tx.update(sessions).set({ secondFactor: false }).where(and(eq(sessions.userId, userId), eq(sessions.secondFactor, true)));
  });
}

/**
 * Sign-in options write nothing: the challenge is sealed (AES-GCM under a server secret) with its purpose and
 * expiry, so anyone may ask for options without filling a table. It is spent when a response comes back
 * (`webauthn_challenges`, primary key: a replay finds it there).
 */
export async function authenticationOptions(app: App) {
  const sealed = Buffer.from(app.keyCodes.seal(`passkey-login:${Date.now() + CHALLENGE_TTL_MS}`), 'base64');
  return generateAuthenticationOptions({ rpID: relyingParty(app).rpID, userVerification: 'preferred', challenge: new Uint8Array(sealed) });
}

/** A sign-in challenge we sealed, not expired, spent now (false: forged, expired, or used before). */
async function spendLoginChallenge(app: App, challenge: string | null): Promise<boolean> {
  if (!challenge) return false;
  let expiresAt: number;
  try {
    const [purpose, exp] = app.keyCodes.open(Buffer.from(challenge, 'base64url').toString('base64')).split(':');
    if (purpose !== 'passkey-login') return false;
    expiresAt = Number(exp);
  } catch {
    return false;
  }
  if (!(expiresAt > Date.now())) return false;
  await app.db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, sql`now()`));
  const spent = await app.db
    .insert(webauthnChallenges)
    .values({ challenge, purpose: 'login-spent', userId: null, expiresAt: new Date(expiresAt) })
    .onConflictDoNothing()
    .returning({ challenge: webauthnChallenges.challenge });
  return spent.length === 1;
}

/**
 * A passkey sign-in: the challenge spent once, the credential found by its id, the assertion verified with its
 * stored key (origin and RP ID from PUBLIC_URL, a counter that must grow), the user handle (when sent) the
 * credential's own user. The session counts as the second factor for new keys.
 */
export async function signInWithPasskey(app: App, response: PasskeyResponse, userAgent: string | null): Promise<AuthResponse> {
  const challenge = challengeOf(response);
  if (!(await spendLoginChallenge(app, challenge))) throw badRequest(passkeyErrors.challengeUsed);
  const [row] = await app.db.select().from(passkeys).where(eq(passkeys.id, response.id)).limit(1);
  if (!row) throw unauthorized(passkeyErrors.unknown);
  const handle = response.response.userHandle;
  if (handle && Buffer.from(handle, 'base64url').toString('hex') !== row.userId.replace(/-/g, '')) throw unauthorized(passkeyErrors.invalid);
  const { rpID, origin } = relyingParty(app);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response: response as unknown as AuthenticationResponseJSON,
      expectedChallenge: challenge!,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: { id: row.id, publicKey: Buffer.from(row.publicKey, 'base64url'), counter: row.counter, transports: row.transports },
      requireUserVerification: false,
    });
  } catch {
    throw unauthorized(passkeyErrors.invalid);
  }
  if (!verified.verified) throw unauthorized(passkeyErrors.invalid);
  // The counter only moves forward: a cloned authenticator's older count is refused (above) and not stored.
  const moved = await app.db
    .update(passkeys)
    .set({ counter: verified.authenticationInfo.newCounter, lastUsedAt: new Date() })
    .where(and(eq(passkeys.id, row.id), eq(passkeys.counter, row.counter)))
    .returning({ id: passkeys.id });
  if (moved.length === 0) throw unauthorized(passkeyErrors.invalid);
  const [user] = await app.db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, row.userId)).limit(1);
  if (!user) throw unauthorized(passkeyErrors.unknown);
  return createSession(app, user, false, { userAgent, secondFactor: true });
}
