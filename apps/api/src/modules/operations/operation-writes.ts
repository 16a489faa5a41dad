import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { lockErrors, lockMessages, operationErrors, type Operation, type UsageRequirements } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationUsers, locks, lockShares, usedOperationIds } from '../../db/schema.js';
import { recordActivity, type ActivityActor } from '../activity/activity.service.js';
import type { LockAccess } from './devices.service.js';
import { OperationRefusal, logTypeOf, refusal, type RefusalKind, type VerifiedOperation } from '../../lib/operation-outcome.js';
import { diff, recordChange, type Change } from '../history/history.service.js';
import { checkGrant } from './rules.js';
import { publishEvent } from '../../lib/webhook-outbox.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * Carries out a verified, admitted operation in one transaction: its id is spent (a second use finds the
 * primary key taken, on any instance), the change is made, and the accepted entry is logged. A refusal
 * found here (a replay, a user not in the application) rolls all of it back.
 */
export async function applyOperation(
  db: Db,
  access: LockAccess,
  verified: VerifiedOperation,
  actor: ActivityActor,
  /** spent: its id was spent already (spendOperationId, before a device was asked); reason: a note for the log entry. */
  options: { spent?: boolean; reason?: string } = {},
): Promise<void> {
  const { lock } = access;
  const type = logTypeOf(verified.operation);
  await db.transaction(async (tx) => {
    if (!options.spent) await spendOperationId(tx as unknown as Db, verified);
    const history: Change[] = [];
    const subject = await change(tx, access, actor.userId, verified.operation, (kind, about, changes) =>
      history.push({ applicationId: lock.applicationId, actor: { id: actor.userId, email: actor.email }, kind, subject: about, changes }),
    );
    await recordActivity(tx as unknown as Db, { lockId: lock.id, applicationId: lock.applicationId, type, actor, subject, reason: options.reason ?? null });
    await recordChange(tx as unknown as Db, ...history);
  });
}

/** Spends the operation's id (its jti, or its signature): a second use, on any instance, is refused as replayed. */
export async function spendOperationId(db: Db, verified: VerifiedOperation): Promise<void> {
  const [fresh] = await db
    .insert(usedOperationIds)
    .values({ id: verified.useKey, expiresAt: new Date(verified.rememberUntil) })
    .onConflictDoNothing()
    .returning({ id: usedOperationIds.id });
  if (!fresh) throw refusal('replayed', 409, logTypeOf(verified.operation));
}

type RecordHistory = (kind: Change['kind'], subject: string, changes: Change['changes']) => void;
const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/**
 * Makes the operation's change and tells `history` what changed in the application's terms (shares,
 * lock settings); answers the log entry's subject (whom or what it concerned).
 */
async function change(tx: Tx, access: LockAccess, signerId: string | null, operation: Operation, history: RecordHistory): Promise<string | null> {
  const { lock, terms: signerTerms } = access;
  switch (operation.type) {
    case 'MUTATE_LOCK': {
      const seconds = operation.duration ?? lock.unlockTime;
      const unlockedUntil = operation.locked ? null : sql`now() + make_interval(secs => ${seconds})`;
      await tx.update(locks).set({ unlockedUntil, updatedAt: sql`now()` }).where(eq(locks.id, lock.id));
      return operation.locked ? null : `${seconds} s`;
    }
    case 'ADD_USER':
      return addUser(tx, access, signerId, operation, history);
    case 'BATCH_ADD_USER': {
      // Each user as its own ADD_USER, in this one transaction: a refusal of any rolls back all.
      const subjects: (string | null)[] = [];
      for (const user of operation.users) subjects.push(await change(tx, { lock, role: 'ADMIN', terms: signerTerms }, signerId, { type: 'ADD_USER', ...user }, history));
      return subjects.filter(Boolean).join(', ');
    }
    case 'REMOVE_USER':
      return removeUsers(tx, access, operation, history);
    case 'MUTATE_SETTING':
      return mutateSetting(tx, access, operation, history);
  }
}

/** A refusal of `operation`'s change: its status, its reason and the reason's kind. */
const refusalOf = (operation: Operation) => (status: number, reason: string, kind: RefusalKind) => new OperationRefusal(status, reason, logTypeOf(operation), { kind });

/** ADD_USER: the share written (never beyond the signer's own), its history and its share.added announcement. */
async function addUser(tx: Tx, { lock, terms: signerTerms }: LockAccess, signerId: string | null, operation: Extract<Operation, { type: 'ADD_USER' }>, history: RecordHistory): Promise<string> {
  const refuse = refusalOf(operation);
  const [target] = await tx
    .select({ id: applicationUsers.id, email: applicationUsers.email })
    .from(applicationUsers)
    .where(and(eq(applicationUsers.id, operation.user), eq(applicationUsers.applicationId, lock.applicationId)))
    .limit(1);
  if (!target) throw refuse(404, operationErrors.unknownUser, 'unknownUser');
  const { start, end } = operation;
  if (start != null && end != null && end <= start) throw refuse(400, lockMessages.endBeforeStart, 'other');
  // Never beyond the signer's own share: no later end, and their hours when they have some.
  const grantProblem = checkGrant(signerTerms, target.id === signerId, end == null ? null : end * 1000);
  if (grantProblem) throw refuse(403, grantProblem.message, grantProblem.key);
  const terms = {
    role: operation.role ?? 'USER',
    startsAt: start == null ? null : new Date(start * 1000),
    endsAt: end == null ? null : new Date(end * 1000),
    ...(signerTerms.timeWindow ? { timeWindow: signerTerms.timeWindow } : {}),
  };
  const [before] = await tx.select().from(lockShares).where(and(eq(lockShares.lockId, lock.id), eq(lockShares.userId, target.id))).limit(1);
  history(
    'share',
    `${target.email ?? target.id} · ${lock.name}`,
    diff(before ? { role: before.role, start: seconds(before.startsAt), end: seconds(before.endsAt) } : {}, { role: terms.role, start: start ?? null, end: end ?? null }),
  );
  await tx.insert(lockShares).values({ lockId: lock.id, userId: target.id, ...terms }).onConflictDoUpdate({ target: [lockShares.lockId, lockShares.userId], set: terms });
  await publishEvent(tx as unknown as Db, lock.applicationId, 'share.added', {
    applicationId: lock.applicationId,
    lockId: lock.id,
    lockName: lock.name,
    userId: target.id,
    email: target.email,
    invited: false,
    role: terms.role,
    start: start ?? null,
    end: end ?? null,
  });
  return `${target.email ?? target.id} (${terms.role})`;
}

/** REMOVE_USER: the shares deleted, each with its history and its share.revoked announcement. */
async function removeUsers(tx: Tx, { lock }: LockAccess, operation: Extract<Operation, { type: 'REMOVE_USER' }>, history: RecordHistory): Promise<string> {
  const removed = await tx
    .delete(lockShares)
    .where(and(eq(lockShares.lockId, lock.id), inArray(lockShares.userId, operation.users)))
    .returning();
  if (removed.length === 0) throw refusalOf(operation)(404, lockErrors.shareNotFound, 'other');
  const people = await tx.select({ id: applicationUsers.id, email: applicationUsers.email }).from(applicationUsers).where(inArray(applicationUsers.id, removed.map((r) => r.userId)));
  for (const share of removed) {
    const who = people.find((p) => p.id === share.userId)?.email ?? share.userId;
    history('share', `${who} · ${lock.name}`, diff({ role: share.role, start: seconds(share.startsAt), end: seconds(share.endsAt) }, { role: null, start: null, end: null }));
    await publishEvent(tx as unknown as Db, lock.applicationId, 'share.revoked', { applicationId: lock.applicationId, lockId: lock.id, lockName: lock.name, userId: share.userId, email: who });
  }
  return people.map((p) => p.email ?? p.id).join(', ');
}

/** MUTATE_SETTING: the lock's unlock time and hours, with their history. */
async function mutateSetting(tx: Tx, { lock }: LockAccess, operation: Extract<Operation, { type: 'MUTATE_SETTING' }>, history: RecordHistory): Promise<string> {
  // The JVM SDK writes every field, the one it does not set as null: beside a duration, a null
  // unlockBetween leaves the hours alone; alone (both null), it clears them.
  const { unlockDuration, unlockBetween } = operation;
  if (unlockDuration == null && unlockBetween === undefined) throw refusalOf(operation)(400, operationErrors.operationInvalid, 'operationInvalid');
  const requirements = { ...(lock.usageRequirements as UsageRequirements) };
  if (unlockBetween) requirements.time = [{ start: unlockBetween.start, end: unlockBetween.end, timezone: unlockBetween.timezone, days: unlockBetween.days }];
  else if (unlockBetween === null && unlockDuration == null) delete requirements.time;
  await tx
    .update(locks)
    .set({ ...(unlockDuration == null ? {} : { unlockTime: unlockDuration }), usageRequirements: requirements, updatedAt: sql`now()` })
    .where(eq(locks.id, lock.id));
  history(
    'lock_settings',
    lock.name,
    diff({ unlockTime: lock.unlockTime, usageRequirements: lock.usageRequirements }, { unlockTime: unlockDuration ?? lock.unlockTime, usageRequirements: requirements }, 'settings.'),
  );
  const parts = [unlockDuration == null ? null : `unlock time ${unlockDuration} s`];
  if (unlockBetween) parts.push(`hours ${unlockBetween.start}–${unlockBetween.end} ${unlockBetween.timezone}`);
  else if (unlockBetween === null && unlockDuration == null) parts.push('hours cleared');
  return parts.filter(Boolean).join(', ');
}

/**
 * Spent ids are kept only while their operation could still be accepted (exp plus skew); past that it is
 * refused as expired whatever its id, so the row can go. At most once a minute per app: each app's purge is
 * its own, so one app's purge never holds back another's (on another database, say).
 */
export class UsedOperationIdPurge {
  private last = 0;

  constructor(private readonly db: Db) {}

  /** Deletes the expired spent ids in the background, unless this app did so less than a minute ago. */
  run(nowMs: number): void {
    if (nowMs - this.last < 60_000) return;
    this.last = nowMs;
    void this.db.delete(usedOperationIds).where(lt(usedOperationIds.expiresAt, new Date(nowMs))).catch(() => {});
  }
}
