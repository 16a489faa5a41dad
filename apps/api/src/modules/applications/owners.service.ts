import { and, asc, count, eq, sql } from 'drizzle-orm';
import { apiErrors, type DirectoryResult, type Owner } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationOwners, applications, users } from '../../db/schema.js';
import { conflict, notFound } from '../../errors.js';
import { isUniqueViolation } from '../../lib/unique-violation.js';
import { touchApplication } from './applications.service.js';
import { recordChange, type ChangeActor } from '../history/history.service.js';

/**
 * `orphan`: the owner's account can no longer sign in (no password and no pending invitation).
 * `foreign`: kept for platform clients; owners here always belong to this platform, so it is false.
 */
export async function listOwners(db: Db, applicationId: string): Promise<Owner[]> {
  const rows = await db
    .select({ userId: users.id, email: users.email, displayName: users.displayName, passwordHash: users.passwordHash, inviteCodeHash: users.inviteCodeHash })
    .from(applicationOwners)
    .innerJoin(users, eq(users.id, applicationOwners.userId))
    .where(eq(applicationOwners.applicationId, applicationId))
    .orderBy(asc(applicationOwners.createdAt));
  return rows.map((r) => ({
    userId: r.userId,
    email: r.email,
    displayName: r.displayName,
    orphan: r.passwordHash === null && r.inviteCodeHash === null,
    foreign: false,
  }));
}

export async function addOwner(db: Db, applicationId: string, userId: string, by: ChangeActor): Promise<void> {
  const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw notFound(apiErrors.userNotFound);
  try {
    await db.transaction(async (tx) => {
      await tx.insert(applicationOwners).values({ applicationId, userId });
      await touchApplication(tx, applicationId);
      await recordChange(tx, { applicationId, actor: by, kind: 'owner', subject: user.email, changes: [{ field: 'owners', before: null, after: user.email }] });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(apiErrors.ownerExists);
    throw err;
  }
}

/** The application row is locked while counting, so two removals can never leave it without an owner. */
export async function removeOwner(db: Db, applicationId: string, userId: string, by: ChangeActor): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select id from ${applications} where ${applications.id} = ${applicationId} for update`);
    const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(applicationOwners).where(eq(applicationOwners.applicationId, applicationId));
    const [isOwner] = await tx
      .select({ userId: applicationOwners.userId })
      .from(applicationOwners)
      .where(and(eq(applicationOwners.applicationId, applicationId), eq(applicationOwners.userId, userId)));
    if (!isOwner) throw notFound(apiErrors.ownerNotFound);
    if (Number(n) <= 1) throw conflict(apiErrors.lastOwner);
    await tx.delete(applicationOwners).where(and(eq(applicationOwners.applicationId, applicationId), eq(applicationOwners.userId, userId)));
    await touchApplication(tx, applicationId);
    const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    const email = user?.email ?? userId;
    await recordChange(tx, { applicationId, actor: by, kind: 'owner', subject: email, changes: [{ field: 'owners', before: email, after: null }] });
  });
}

/** Directory lookup by email (case-insensitive): the user's id, never more. */
export async function queryDirectory(db: Db, email: string): Promise<DirectoryResult> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email.toLowerCase())).limit(1);
  if (!user) throw notFound(apiErrors.userNotFound);
  return { id: user.id, publicKey: null };
}
