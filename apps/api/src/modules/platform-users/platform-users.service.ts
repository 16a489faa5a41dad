import { and, asc, eq, gt, ilike, isNull, or, sql } from 'drizzle-orm';
import {
  platformUserErrors,
  type ApplicationUser,
  type ApplicationUserList,
  type ApplicationUserListQuery,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationUsers, lockShares } from '../../db/schema.js';
import { conflict, notFound } from '../../errors.js';
import type { VerifiedIdentity } from '../../lib/third-party-tokens.js';
import { recordChange, type ChangeActor } from '../history/history.service.js';
import { publishEvent } from '../../lib/webhook-outbox.js';
import { cursorTimeOf, decodeCursor, encodeCursor } from '../../lib/keyset-cursor.js';
import { isUniqueViolation } from '../../lib/unique-violation.js';

type Row = typeof applicationUsers.$inferSelect;
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

function toUser(row: Row): ApplicationUser {
  return {
    userId: row.id,
    sub: row.sub,
    email: row.email,
    displayName: row.displayName,
    status: row.status,
    createdAt: seconds(row.createdAt),
    updatedAt: seconds(row.updatedAt),
    lastSeenAt: row.lastSeenAt ? seconds(row.lastSeenAt) : null,
  };
}

/**
 * First sign-in creates the user, later tokens refresh email and name; a pending user added by email
 * is claimed by the first token carrying that email. Retried on a unique violation, which only a
 * concurrent first sign-in of the same user can cause.
 */
export async function upsertFromToken(db: Db, identity: VerifiedIdentity): Promise<ApplicationUser> {
  const { applicationId, sub, email, displayName } = identity;
  const now = new Date();
  // A token without an email or name keeps what the user already has.
  const profile = { ...(email ? { email } : {}), ...(displayName ? { displayName } : {}) };
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const [existing] = await tx
          .update(applicationUsers)
          .set({ ...profile, updatedAt: now, lastSeenAt: now })
          .where(and(eq(applicationUsers.applicationId, applicationId), eq(applicationUsers.sub, sub)))
          .returning();
        if (existing) {
          // The user is now known under that email; an invitation for it is fulfilled: its lock shares
          // still open move to this user, then the pending row goes.
          if (email) {
            await tx.execute(sql`insert into ${lockShares} (lock_id, user_id, role, starts_at, ends_at, time_window, created_at)
              select s.lock_id, ${existing.id}, s.role, s.starts_at, s.ends_at, s.time_window, s.created_at
              from ${lockShares} s join ${applicationUsers} on ${applicationUsers.id} = s.user_id
              where ${pendingWithEmail(applicationId, email)} and (s.invite_expires_at is null or s.invite_expires_at > now())
              on conflict do nothing`);
            const accepted = await tx.delete(applicationUsers).where(pendingWithEmail(applicationId, email)).returning({ id: applicationUsers.id });
            if (accepted.length > 0)
              await publishEvent(tx, applicationId, 'invitation.accepted', { applicationId, userId: existing.id, email, sub });
          }
          return toUser(existing);
        }
        if (email) {
          const [claimed] = await tx
            .update(applicationUsers)
            .set({ sub, status: 'active', ...profile, updatedAt: now, lastSeenAt: now })
            .where(pendingWithEmail(applicationId, email))
            .returning();
          if (claimed) {
            // Lock invitations accepted in time become plain shares; expired ones stay refused
            // (shares.service invitationRefusal) until an owner reshares.
            await tx.update(lockShares).set({ inviteExpiresAt: null }).where(and(eq(lockShares.userId, claimed.id), gt(lockShares.inviteExpiresAt, now)));
            await publishEvent(tx, applicationId, 'invitation.accepted', { applicationId, userId: claimed.id, email: claimed.email, sub });
            return toUser(claimed);
          }
        }
        const [created] = await tx
          .insert(applicationUsers)
          .values({ applicationId, sub, email, displayName, status: 'active', lastSeenAt: now })
          .onConflictDoUpdate({
            target: [applicationUsers.applicationId, applicationUsers.sub],
            set: { ...profile, updatedAt: now, lastSeenAt: now },
          })
          .returning();
        return toUser(created!);
      });
    } catch (error) {
      if (attempt < 2 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

const pendingWithEmail = (applicationId: string, email: string) =>
  and(eq(applicationUsers.applicationId, applicationId), isNull(applicationUsers.sub), sql`lower(${applicationUsers.email}) = ${email}`);

/** The cursor is opaque to clients: base64url of [created_at to the microsecond, id]. */
const cursorTime = cursorTimeOf(applicationUsers.createdAt);

/** Keyset paging in (created_at, id) order: stable while users are added or removed between pages. */
export async function listUsers(db: Db, applicationId: string, query: ApplicationUserListQuery): Promise<ApplicationUserList> {
  const conditions = [eq(applicationUsers.applicationId, applicationId)];
  if (query.cursor) {
    const [time, id] = decodeCursor(query.cursor, 'uuid', platformUserErrors.invalidCursor);
    conditions.push(sql`(${applicationUsers.createdAt}, ${applicationUsers.id}) > (${time}::timestamptz, ${id}::uuid)`);
  }
  if (query.search) {
    const pattern = `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(or(ilike(applicationUsers.email, pattern), ilike(applicationUsers.displayName, pattern))!);
  }
  const rows = await db
    .select({ row: applicationUsers, cursorTime })
    .from(applicationUsers)
    .where(and(...conditions))
    .orderBy(asc(applicationUsers.createdAt), asc(applicationUsers.id))
    .limit(query.pageSize + 1);
  const page = rows.slice(0, query.pageSize);
  const last = page.at(-1);
  return {
    users: page.map((r) => toUser(r.row)),
    nextCursor: rows.length > query.pageSize && last ? encodeCursor(last.cursorTime, last.row.id) : null,
  };
}

/** An owner adds someone by email: pending until that person's first token. */
export async function addUser(db: Db, applicationId: string, rawEmail: string, by: ChangeActor): Promise<ApplicationUser> {
  const email = rawEmail.trim().toLowerCase();
  const [known] = await db
    .select({ id: applicationUsers.id })
    .from(applicationUsers)
    .where(and(eq(applicationUsers.applicationId, applicationId), sql`lower(${applicationUsers.email}) = ${email}`))
    .limit(1);
  if (known) throw conflict(platformUserErrors.userExists);
  return db.transaction(async (tx) => {
    const [created] = await tx
      .insert(applicationUsers)
      .values({ applicationId, email, status: 'pending' })
      .onConflictDoNothing()
      .returning();
    // Nothing inserted: the same email was added concurrently.
    if (!created) throw conflict(platformUserErrors.userExists);
    await recordChange(tx, { applicationId, actor: by, kind: 'user', subject: email, changes: [{ field: 'users', before: null, after: email }] });
    return toUser(created);
  });
}

export async function removeUser(db: Db, applicationId: string, userId: string, by: ChangeActor): Promise<void> {
  await db.transaction(async (tx) => {
    const [removed] = await tx
      .delete(applicationUsers)
      .where(and(eq(applicationUsers.applicationId, applicationId), eq(applicationUsers.id, userId)))
      .returning({ id: applicationUsers.id, email: applicationUsers.email, sub: applicationUsers.sub });
    if (!removed) throw notFound(platformUserErrors.userNotFound);
    const who = removed.email ?? removed.sub ?? removed.id;
    await recordChange(tx, { applicationId, actor: by, kind: 'user', subject: who, changes: [{ field: 'users', before: who, after: null }] });
  });
}
