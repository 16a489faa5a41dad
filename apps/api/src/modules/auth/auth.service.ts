import { randomUUID } from 'node:crypto';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { apiErrors, type AuthResponse, type Language, type Register } from '@latchkey/contract';
import type { FastifyInstance } from 'fastify';
import { sessions, users } from '../../db/schema.js';
import { conflict, unauthorized } from '../../errors.js';
import { afterReply, sendVerificationEmail } from '../account/account-trust.service.js';
import { createSession } from '../../lib/sessions.js';
import { isUniqueViolation } from '../../lib/unique-violation.js';

type App = FastifyInstance;

/**
 * A new account. `force` is accepted for the platform's clients (the SDKs send it) and changes nothing
 * (docs/decisions/0009-register-force.md): an email that already has a row — an account, or a pending
 * invitation whose email nobody has proved yet — is answered 409 `accountExists` either way. What an
 * invitation was given (ownerships) passes only to whoever presents its code (login, then a new
 * password); a stranger cannot tell an invitation from an account here, nor take it over.
 */
export async function register(
  app: App,
  input: Register,
  _force: boolean,
  options: { userAgent?: string | null; language?: Language } = {},
): Promise<AuthResponse> {
  const email = input.email.toLowerCase();
  // Hashed before the look-up, so a taken email answers no faster than a free one.
  const passwordHash = await app.passwords.hash(input.password);
  const [existing] = await app.db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  if (existing) throw conflict(apiErrors.accountExists);
  try {
    const [user] = await app.db
      .insert(users)
      .values({ email, passwordHash, displayName: input.displayName || null })
      .returning({ id: users.id });
    // The address is proved by the link in this email (sent after the answer).
    afterReply(app, () => sendVerificationEmail(app, { id: user!.id, email }, options.language ?? 'en'));
    return createSession(app, { id: user!.id, email }, false, { userAgent: options.userAgent });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(apiErrors.accountExists);
    throw err;
  }
}

/**
 * Password login, or — for a pending invitation — a one-time login with the emailed code. The code is
 * spent on first use; the account then has to choose a password (`passwordChangeRequired`).
 */
export async function login(app: App, input: { email: string; password: string }, userAgent: string | null = null): Promise<AuthResponse> {
  const email = input.email.toLowerCase();
  const [user] = await app.db.select().from(users).where(eq(users.email, email)).limit(1);
  if (user?.passwordHash) {
    if (!(await app.passwords.verify(user.passwordHash, input.password))) throw unauthorized(apiErrors.wrongCredentials);
    return createSession(app, user, user.passwordChangeRequired, { userAgent });
  }
  if (user?.inviteCodeHash) {
    const expired = !user.inviteExpiresAt || user.inviteExpiresAt.getTime() < Date.now();
    if (!(await app.passwords.verify(user.inviteCodeHash, input.password)) || expired) {
      // Answered like a wrong password or an unknown email: a stranger must not learn that an invitation
      // exists (it used to be 422 pendingInvite). Verified first, so an expired code costs the same.
      throw unauthorized(apiErrors.wrongCredentials);
    }
    // Spend the code atomically: only one login can consume it.
    const spent = await app.db
      .update(users)
      .set({ inviteCodeHash: null, inviteExpiresAt: null, passwordChangeRequired: true, emailVerified: true })
      .where(and(eq(users.id, user.id), eq(users.inviteCodeHash, user.inviteCodeHash)))
      .returning({ id: users.id });
    if (spent.length === 0) throw unauthorized(apiErrors.wrongCredentials);
    return createSession(app, user, true, { userAgent });
  }
  await app.passwords.verify(null, input.password);
  throw unauthorized(apiErrors.wrongCredentials);
}

/**
 * Rotation with reuse detection. The conditional UPDATE is the whole race: of two refreshes presenting
 * the same token, exactly one matches `refresh_jti`; the other finds the session with a newer jti, which
 * means the token was used twice — possibly stolen — so the whole session is revoked.
 */
export async function refresh(app: App, token: string | null): Promise<{ authToken: string; refreshToken: string }> {
  if (!token) throw unauthorized();
  let claims;
  try {
    claims = await app.tokens.verifyRefresh(token);
  } catch {
    throw unauthorized();
  }
  const next = randomUUID();
  const rotated = await app.db
    .update(sessions)
    .set({ refreshJti: next, lastUsedAt: sql`now()` })
    .where(and(eq(sessions.id, claims.sid), eq(sessions.refreshJti, claims.jti), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)))
    .returning({ userId: sessions.userId });
  if (rotated.length === 0) {
    const [session] = await app.db.select().from(sessions).where(eq(sessions.id, claims.sid)).limit(1);
    if (session && !session.revokedAt && session.refreshJti !== claims.jti) {
      await app.db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.id, session.id));
      throw unauthorized(apiErrors.refreshReused);
    }
    throw unauthorized();
  }
  const [user] = await app.db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, rotated[0]!.userId)).limit(1);
  if (!user) throw unauthorized();
  const [authToken, refreshed] = await Promise.all([
    app.tokens.signAccess({ sub: user.id, email: user.email, sid: claims.sid }),
    app.tokens.signRefresh({ sub: user.id, sid: claims.sid, jti: next }),
  ]);
  return { authToken, refreshToken: refreshed.token };
}

export async function destroySession(app: App, sessionId: string): Promise<void> {
  await app.db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.id, sessionId));
}

/**
 * Sign out everywhere: every live session of the user ends, this one included. Their refresh tokens stop
 * working at once; their access tokens at the next request on any instance, because every request checks
 * its session and the database's change notice drops the cached answer (lib/access-cache.ts).
 */
export async function destroyAllSessions(app: App, userId: string): Promise<number> {
  const ended = await app.db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return ended.length;
}
