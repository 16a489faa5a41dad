import { and, eq, ne } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { apiErrors, type Account, type ChangePassword } from '@latchkey/contract';
import { sessions, users } from '../../db/schema.js';
import { unauthorized } from '../../errors.js';
import type { AuthUser } from '../../plugins/auth.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { endEarlierCertificates } from '../certificates/certificates.service.js';

export async function getAccount(app: FastifyInstance, user: AuthUser): Promise<Account> {
  const [row] = await app.db
    .select({ userId: users.id, email: users.email, displayName: users.displayName, emailVerified: users.emailVerified, publicKey: sessions.publicKey })
    .from(users)
    .innerJoin(sessions, eq(sessions.id, user.sessionId))
    .where(eq(users.id, user.id))
    .limit(1);
  if (!row) throw unauthorized();
  return row;
}

/**
 * An application user's account, as their application's token describes it: the application vouches for
 * the email, the platform never verified it, and it keeps no long-lived key for them (their operations
 * are signed with the ephemeral keys certified at /auth/certificate).
 */
export function applicationUserAccount(user: LockUser): Account {
  return { userId: user.id, email: user.email ?? '', displayName: user.displayName, emailVerified: false, publicKey: null };
}

export async function updateAccount(app: FastifyInstance, user: AuthUser, displayName: string): Promise<void> {
  await app.db.update(users).set({ displayName }).where(eq(users.id, user.id));
}

/**
 * Changes the password, ends every other session of the user and every certificate issued so far. An
 * invited user who signed in with their one-time code has no password yet; that session is the proof, so
 * the old password is not checked.
 */
export async function changePassword(app: FastifyInstance, user: AuthUser, input: ChangePassword): Promise<void> {
  const [row] = await app.db.select().from(users).where(eq(users.id, user.id)).limit(1);
  if (!row) throw unauthorized();
  const fromInvitation = row.passwordHash === null && row.passwordChangeRequired;
  if (!fromInvitation && !(await app.passwords.verify(row.passwordHash, input.oldPassword))) {
    throw unauthorized(apiErrors.wrongOldPassword);
  }
  const passwordHash = await app.passwords.hash(input.newPassword);
  await app.db.update(users).set({ passwordHash, passwordChangeRequired: false }).where(eq(users.id, user.id));
  // The keys certified under the old password stop opening doors too; this session certifies its key again.
  await endEarlierCertificates(app.db, user.id);
  await app.db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.userId, user.id), ne(sessions.id, user.sessionId)));
}
