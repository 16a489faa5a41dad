import { and, desc, eq, gte, lte, sql } from 'drizzle-orm';
import {
  LOCK_LOG_DEFAULT_PAGE_SIZE,
  lockMessages,
  type AccessMethod,
  type ActivitySource,
  type LockLogEntry,
  type LockLogPage,
  type LockLogQuery,
} from '@latchkey/contract';
import { affectedRows, type Db } from '../../db/client.js';
import { lockActivity, users } from '../../db/schema.js';
import type { AuthUser } from '../../plugins/auth.js';
import { cursorTimeOf, decodeCursor, encodeCursor } from '../../lib/keyset-cursor.js';

type Row = typeof lockActivity.$inferSelect;
type LogType = Row['type'];

/** Who did it: an application user or platform user; null for the platform itself. */
export interface ActivityActor {
  userId: string | null;
  email: string | null;
  displayName: string | null;
}

export interface NewActivity {
  lockId: string;
  applicationId: string;
  type: LogType;
  actor: ActivityActor | null;
  /** What the entry is about besides the lock: the user shared with or revoked, the setting changed … */
  subject?: string | null;
  rejected?: boolean;
  /** Why it was refused (or a note on what was accepted). */
  reason?: string | null;
  /** How an access was made (UNLOCK/LOCK entries). */
  method?: AccessMethod | null;
  accessCodeId?: string | null;
  /** Who reports it; the platform unless a device's signed event says so. */
  source?: ActivitySource;
}

/** A signed-in portal user (an owner, so an admin of every lock of the application) as the log names them. */
export async function platformActor(db: Db, user: AuthUser): Promise<ActivityActor> {
  const [row] = await db.select({ displayName: users.displayName }).from(users).where(eq(users.id, user.id)).limit(1);
  return { userId: user.id, email: user.email, displayName: row?.displayName ?? null };
}

/** Row → contract entry; the time is epoch seconds with the milliseconds as the fraction. */
export function toLogEntry(row: Row): LockLogEntry {
  return {
    id: row.id,
    lockId: row.lockId,
    timestamp: row.at.getTime() / 1000,
    type: row.type,
    actor: { userId: row.actorUserId, email: row.actorEmail, displayName: row.actorDisplayName },
    subject: row.subject,
    rejected: row.rejected,
    reason: row.reason,
    method: row.method,
    accessCodeId: row.accessCodeId,
    source: row.source,
    offline: row.offline,
    value: row.value,
  };
}

/**
 * Appends one entry to a lock's log. Takes the database or an open transaction, so an entry can commit
 * together with the change it records (its NOTIFY then goes out at that commit, with the change).
 */
export async function recordActivity(db: Db, entry: NewActivity): Promise<LockLogEntry> {
  const [row] = await db
    .insert(lockActivity)
    .values({
      lockId: entry.lockId,
      applicationId: entry.applicationId,
      type: entry.type,
      actorUserId: entry.actor?.userId ?? null,
      actorEmail: entry.actor?.email ?? null,
      actorDisplayName: entry.actor?.displayName ?? null,
      subject: entry.subject ?? null,
      rejected: entry.rejected ?? false,
      reason: entry.reason ?? null,
      method: entry.method ?? null,
      accessCodeId: entry.accessCodeId ?? null,
      source: entry.source ?? 'platform',
    })
    .returning();
  return toLogEntry(row!);
}

/**
 * Counts a refusal on the entry that already records the same one — same lock, caller, kind and reason,
 * written within `windowSeconds` — instead of adding an entry; answers whether there was one. Identical
 * refusals are taken one at a time (a transaction-scoped advisory lock on what makes them identical), so
 * a burst of them at once, on any instance, makes one entry. Call it in the transaction that would
 * otherwise write the entry.
 */
export async function countRepeatedRefusal(tx: Db, entry: NewActivity, windowSeconds: number): Promise<boolean> {
  const userId = entry.actor?.userId ?? null;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`refusal|${entry.lockId}|${userId ?? ''}|${entry.type}|${entry.reason ?? ''}`}))`);
  const updated = await tx.execute(sql`
    update ${lockActivity} set repeats = repeats + 1 where id = (
      select id from ${lockActivity}
      where ${lockActivity.lockId} = ${entry.lockId} and ${lockActivity.at} > now() - make_interval(secs => ${windowSeconds})
        and ${lockActivity.rejected} and ${lockActivity.actorUserId} is not distinct from ${userId}
        and ${lockActivity.type} = ${entry.type} and ${lockActivity.reason} is not distinct from ${entry.reason ?? null}
      order by ${lockActivity.at} desc, ${lockActivity.seq} desc limit 1
    )`);
  return affectedRows(updated) > 0;
}

/** One entry by id (live events fetch the entry a notice names). */
export async function getActivity(db: Db, entryId: string): Promise<LockLogEntry | null> {
  const [row] = await db.select().from(lockActivity).where(eq(lockActivity.id, entryId)).limit(1);
  return row ? toLogEntry(row) : null;
}

/**
 * The cursor is opaque to clients: base64url of [at to the microsecond, seq] of the page's last entry.
 * A JS Date keeps milliseconds only, so the time is read from the database as text, to the microsecond.
 */
const cursorTime = cursorTimeOf(lockActivity.at);

/**
 * A lock's log, newest first, keyset-paged over (at, seq) with optional inclusive time bounds (epoch
 * seconds). Every page is one range scan of the (lock_id, at, seq) index read backwards, so page N
 * costs the same as page 1 whatever the log's size (bench/activity-page.mjs).
 */
export async function listActivity(db: Db, lockId: string, query: LockLogQuery): Promise<LockLogPage> {
  const pageSize = query.pageSize ?? LOCK_LOG_DEFAULT_PAGE_SIZE;
  const conditions = [eq(lockActivity.lockId, lockId)];
  if (query.start !== undefined) conditions.push(gte(lockActivity.at, new Date(query.start * 1000)));
  if (query.end !== undefined) conditions.push(lte(lockActivity.at, new Date(query.end * 1000)));
  if (query.cursor) {
    const [time, seq] = decodeCursor(query.cursor, 'seq', lockMessages.invalidCursor);
    conditions.push(sql`(${lockActivity.at}, ${lockActivity.seq}) < (${time}::timestamptz, ${seq}::bigint)`);
  }
  const rows = await db
    .select({ row: lockActivity, cursorTime })
    .from(lockActivity)
    .where(and(...conditions))
    .orderBy(desc(lockActivity.at), desc(lockActivity.seq))
    .limit(pageSize + 1);
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  return {
    items: page.map((r) => toLogEntry(r.row)),
    nextCursor: rows.length > pageSize && last ? encodeCursor(last.cursorTime, last.row.seq) : null,
  };
}
