import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { accountErrors, type AccountSession } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationChanges, applicationOwners, lockActivity, sessions, users } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The account's live sessions, most recently used first. */
export async function listSessions(db: Db, userId: string, currentSessionId: string): Promise<AccountSession[]> {
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)));
  return rows
    .map((r) => ({
      id: r.id,
      userAgent: r.userAgent,
      createdAt: seconds(r.createdAt),
      lastUsedAt: seconds(r.lastUsedAt ?? r.createdAt),
      current: r.id === currentSessionId,
      passkey: r.secondFactor,
    }))
    .sort((a, b) => Number(b.current) - Number(a.current) || b.lastUsedAt - a.lastUsedAt);
}

/** Ends one of the account's own sessions; anyone else's id is a 404 like a missing one. */
export async function endSession(db: Db, userId: string, sessionId: string): Promise<void> {
  const ended = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  if (ended.length === 0) throw notFound(accountErrors.sessionNotFound);
}

/**
 * DELETE /account: refused (409) while the account is the last owner of an application. Otherwise, in one
 * transaction, the history and lock logs name the account "Deleted user" (its id stays, so entries still
 * group), and the user row goes — its sessions, ownerships, proved keys and pending links with it (foreign
 * keys cascade), so every token and certificate of the account stops working at once.
 */
export async function deleteAccount(db: Db, userId: string): Promise<void> {
  await db.transaction(async (tx) => {
    // Holds the user's ownerships still while deciding, so a co-owner leaving at the same time cannot make
    // this account the last owner after the check.
    const [user] = await tx.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId)).for('update');
    if (!user) return;
    const lastOwned = await tx.execute(sql`
      select o.application_id from ${applicationOwners} o
      where o.user_id = ${userId}
        and not exists (select 1 from ${applicationOwners} other where other.application_id = o.application_id and other.user_id <> ${userId})
      limit 1`);
    const rows = (lastOwned as { rows?: unknown[] }).rows ?? (lastOwned as unknown as unknown[]);
    if (rows.length > 0) throw new AppError(409, accountErrors.lastOwner);
    const deleted = accountErrors.deletedUser;
    await tx.update(applicationChanges).set({ actorEmail: deleted }).where(eq(applicationChanges.actorUserId, userId));
    // Entries about the account (an owner added or removed) named it by its address: that goes too.
    await tx.execute(sql`
      update ${applicationChanges}
      set subject = replace(subject, ${user.email}, ${deleted}),
          changes = replace(changes::text, ${user.email}, ${deleted})::jsonb
      where strpos(coalesce(subject, ''), ${user.email}) > 0 or strpos(changes::text, ${user.email}) > 0`);
    await tx
      .update(lockActivity)
      .set({ actorEmail: accountErrors.deletedUser, actorDisplayName: accountErrors.deletedUser })
      .where(eq(lockActivity.actorUserId, userId));
    await tx.delete(users).where(eq(users.id, userId));
  });
}
