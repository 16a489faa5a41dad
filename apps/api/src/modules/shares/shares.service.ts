import { and, asc, desc, eq, gt, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { lockErrors, uiErrors, type CreateLockShare, type Language, type LockShare, type TimeRule, isUuid } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationUsers, locks, lockShares } from '../../db/schema.js';
import { notFound, unauthorized } from '../../errors.js';
import type { AuthUser } from '../../plugins/auth.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { platformActor, recordActivity } from '../activity/activity.service.js';
import { getLockRow } from '../locks/locks.service.js';
import { diff, recordChange } from '../history/history.service.js';
import { publishEvent } from '../../lib/webhook-outbox.js';
import { sendShareEmail, shareSendsEmail } from './share-emails.js';

export { sendShareEmail, shareSendsEmail };

type ShareRow = typeof lockShares.$inferSelect;
type UserRow = typeof applicationUsers.$inferSelect;

const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

function toShare(share: ShareRow, user: Pick<UserRow, 'email' | 'displayName' | 'status'>): LockShare {
  return {
    userId: share.userId,
    email: user.email,
    displayName: user.displayName,
    status: user.status,
    role: share.role,
    start: seconds(share.startsAt),
    end: seconds(share.endsAt),
    timeWindow: (share.timeWindow as TimeRule | null) ?? null,
    inviteExpiresAt: seconds(share.inviteExpiresAt),
    createdAt: seconds(share.createdAt)!,
  };
}

/**
 * Why a share cannot be used because of its invitation: it was made to an email, and that person's first
 * sign-in did not come before the invitation expired (a timely sign-in clears `inviteExpiresAt`, see
 * platform-users' upsertFromToken). The answer is the activation-link-expired message (ask the admin to reshare); the owner
 * reshares to send a new invitation. Null when the invitation does not stand in the way.
 */
export function invitationRefusal(share: Pick<ShareRow, 'inviteExpiresAt'>, nowMs: number = Date.now()): string | null {
  return share.inviteExpiresAt && share.inviteExpiresAt.getTime() <= nowMs ? uiErrors.activationLinkExpired : null;
}

/**
 * Whether an application user holds a share that has not ended, and whose invitation (if any) has not
 * expired, of some lock of their application; with `role`, of that role; with `begun`, one that has begun.
 */
export async function holdsLiveShare(db: Db, user: { id: string; applicationId: string | null }, only: { role?: 'ADMIN'; begun?: boolean } = {}): Promise<boolean> {
  if (!user.applicationId) return false;
  const [row] = await db
    .select({ lockId: lockShares.lockId })
    .from(lockShares)
    .innerJoin(locks, and(eq(locks.id, lockShares.lockId), eq(locks.applicationId, user.applicationId)))
    .where(
      and(
        eq(lockShares.userId, user.id),
        only.role ? eq(lockShares.role, only.role) : undefined,
        only.begun ? or(isNull(lockShares.startsAt), lte(lockShares.startsAt, sql`now()`)) : undefined,
        or(isNull(lockShares.endsAt), gt(lockShares.endsAt, sql`now()`)),
        or(isNull(lockShares.inviteExpiresAt), gt(lockShares.inviteExpiresAt, sql`now()`)),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * A tile's sign-in is a key to doors, not an account: it certifies keys, looks people up and invites them
 * only while its user still holds a share that has not ended (nor its invitation expired). Checked, with
 * no cache, by the routes that grant those powers; a 401 once the share is gone.
 */
export async function refuseEndedTileSignIn(db: Db, user: LockUser): Promise<void> {
  if (user.tile && !(await holdsLiveShare(db, user))) throw unauthorized();
}

export async function listShares(db: Db, applicationId: string, lockId: string): Promise<LockShare[]> {
  await getLockRow(db, applicationId, lockId);
  const rows = await db
    .select({ share: lockShares, user: applicationUsers })
    .from(lockShares)
    .innerJoin(applicationUsers, eq(applicationUsers.id, lockShares.userId))
    .where(eq(lockShares.lockId, lockId))
    .orderBy(asc(lockShares.createdAt), asc(lockShares.userId));
  return rows.map((r) => toShare(r.share, r.user));
}

/**
 * The application user a share goes to: by id, or by email — the most recently seen active user with
 * that email, else the pending user of that email, created if need be (one pending row per email, so a
 * concurrent share to the same new email finds the row the other one made).
 */
async function resolveUser(db: Db, applicationId: string, input: CreateLockShare): Promise<UserRow> {
  const inApp = eq(applicationUsers.applicationId, applicationId);
  if (input.userId) {
    const [user] = await db.select().from(applicationUsers).where(and(inApp, eq(applicationUsers.id, input.userId))).limit(1);
    if (!user) throw notFound(lockErrors.userNotFound);
    return user;
  }
  const email = input.email!.toLowerCase();
  const withEmail = and(inApp, sql`lower(${applicationUsers.email}) = ${email}`);
  const [active] = await db
    .select()
    .from(applicationUsers)
    .where(and(withEmail, isNotNull(applicationUsers.sub)))
    .orderBy(sql`${applicationUsers.lastSeenAt} desc nulls last`, desc(applicationUsers.createdAt))
    .limit(1);
  if (active) return active;
  await db.insert(applicationUsers).values({ applicationId, email, status: 'pending' }).onConflictDoNothing();
  const [pending] = await db.select().from(applicationUsers).where(and(withEmail, isNull(applicationUsers.sub))).limit(1);
  return pending!;
}

/**
 * Shares the lock (or changes an existing share: role, bounds, window). A pending user gets an
 * invitation that expires after INVITE_TTL_SECONDS; sharing again renews it and sends it again. The SHARE
 * entry commits with the share; the email goes out after the commit, so a slow mailer holds no locks.
 * An email the share will send is charged first (the sharer's and the application's allowances): a
 * refused charge is a 429 and shares nothing.
 */
export async function addShare(
  app: FastifyInstance,
  applicationId: string,
  lockId: string,
  input: CreateLockShare,
  by: AuthUser,
  language?: Language,
): Promise<{ share: LockShare; created: boolean }> {
  await getLockRow(app.db, applicationId, lockId);
  if (await shareSendsEmail(app.db, applicationId, input)) await app.chargeEmail({ senderId: by.id, applicationId, keyEmail: true });
  const { share, user, lockName, created } = await app.db.transaction(async (tx) => {
    const lock = await getLockRow(tx, applicationId, lockId);
    const user = await resolveUser(tx, applicationId, input);
    const values = {
      role: input.role,
      startsAt: input.start == null ? null : new Date(input.start * 1000),
      endsAt: input.end == null ? null : new Date(input.end * 1000),
      timeWindow: input.timeWindow ?? null,
      inviteExpiresAt: user.status === 'pending' ? new Date(Date.now() + app.config.inviteTtl * 1000) : null,
    };
    const [existing] = await tx
      .select()
      .from(lockShares)
      .where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, user.id)))
      .limit(1);
    const [share] = await tx
      .insert(lockShares)
      .values({ lockId, userId: user.id, ...values })
      .onConflictDoUpdate({ target: [lockShares.lockId, lockShares.userId], set: values })
      .returning();
    await recordActivity(tx, { lockId, applicationId, type: 'SHARE', actor: await platformActor(tx, by), subject: user.email ?? user.id, reason: input.role });
    await recordChange(tx, { applicationId, actor: by, kind: 'share', subject: `${user.email ?? user.id} · ${lock.name}`, changes: shareChanges(existing ?? null, share!) });
    await publishEvent(tx, applicationId, 'share.added', { applicationId, lockId, lockName: lock.name, userId: user.id, email: user.email, invited: user.status === 'pending', ...shareTerms(share!) });
    return { share: share!, user, lockName: lock.name, created: !existing };
  });
  if (user.email) {
    await sendShareEmail(app, { applicationId, lockName, to: user.email, invitation: user.status === 'pending', expiresAt: share.inviteExpiresAt, recipientName: user.displayName, language });
  }
  return { share: toShare(share, user), created };
}

/** A share's terms as the history shows them (times as epoch seconds). */
function shareTerms(share: ShareRow | null): Record<string, unknown> {
  if (!share) return {};
  return { role: share.role, start: seconds(share.startsAt), end: seconds(share.endsAt), timeWindow: share.timeWindow ?? null };
}
const shareChanges = (before: ShareRow | null, after: ShareRow | null) =>
  diff(shareTerms(before), after ? shareTerms(after) : { role: null, start: null, end: null, timeWindow: null });

/** Revokes a share at once: the row is gone for every instance, which read shares from the database. */
export async function removeShare(db: Db, applicationId: string, lockId: string, userId: string, by: AuthUser): Promise<void> {
  await db.transaction(async (tx) => {
    const lock = await getLockRow(tx, applicationId, lockId);
    if (!isUuid(userId)) throw notFound(lockErrors.shareNotFound);
    const [removed] = await tx
      .delete(lockShares)
      .where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, userId)))
      .returning();
    if (!removed) throw notFound(lockErrors.shareNotFound);
    const [user] = await tx.select({ email: applicationUsers.email }).from(applicationUsers).where(eq(applicationUsers.id, userId)).limit(1);
    await recordActivity(tx, { lockId, applicationId, type: 'REVOKE', actor: await platformActor(tx, by), subject: user?.email ?? userId });
    await recordChange(tx, { applicationId, actor: by, kind: 'share', subject: `${user?.email ?? userId} · ${lock.name}`, changes: shareChanges(removed, null) });
    await publishEvent(tx, applicationId, 'share.revoked', { applicationId, lockId, lockName: lock.name, userId, email: user?.email ?? null });
  });
}
