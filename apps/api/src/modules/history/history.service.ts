import { and, desc, eq, inArray, or, sql } from 'drizzle-orm';
import { apiErrors, historyErrors, HISTORY_MAX_ACTORS, HISTORY_PAGE_SIZE, REDACTED, type FieldChange, type HistoryActor, type HistoryEntry, type HistoryKind, type HistoryPage, type HistoryQuery, isUuid } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationChanges, applications } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { cursorTimeOf, decodeCursor, encodeCursor } from '../../lib/keyset-cursor.js';

/** Changes to the application itself (not its locks, shares or users): announced as application.updated. */
const APPLICATION_KINDS = new Set<HistoryKind>(['details', 'urls', 'branding', 'logo', 'key', 'issuer', 'cors', 'owner']);

/** Who made a change: a portal user (an owner), or a lock admin acting through a signed operation. */
export interface ChangeActor {
  id: string | null;
  email: string | null;
}

export interface Change {
  applicationId: string;
  actor: ChangeActor;
  kind: HistoryKind;
  /** What the change is about beyond the application itself (a lock's name, a share's user …). */
  subject?: string | null;
  changes: FieldChange[];
}

/** Fields whose values are secrets wherever they appear (a JWK's private members included). */
const SECRET_FIELDS = /(^|\.)(secret|password|token|privateKey|d|p|q|dp|dq|qi|k)$/i;

function redact(change: FieldChange): FieldChange {
  if (!SECRET_FIELDS.test(change.field)) return change;
  return { field: change.field, before: change.before == null ? null : REDACTED, after: change.after == null ? null : REDACTED };
}

/** The changed fields only: a field whose before and after are the same is no change. */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>, prefix = ''): FieldChange[] {
  const out: FieldChange[] = [];
  for (const key of Object.keys(after)) {
    const a = after[key] ?? null;
    const b = before[key] ?? null;
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ field: prefix + key, before: b, after: a });
  }
  return out;
}

/**
 * THE place a change to an application is recorded (the application's own fields are recorded by the
 * history trigger instead, application-update.ts). Call it with the transaction that makes the change,
 * so the entry commits with it or not at all. Entries with no changed field are dropped; secrets are
 * redacted here, whatever the caller passed. It holds the applications FOR KEY SHARE until the commit
 * (what the history's foreign key did: an application removed meanwhile is a 404, and its removal waits,
 * then takes the entries with it). A change to the application itself owes application.updated while a
 * webhook is subscribed: its first entry carries the event's data (`announce`), and the webhook relay
 * delivers it.
 */
export async function recordChange(tx: Db, ...entries: Change[]): Promise<void> {
  const rows = entries
    .filter((e) => e.changes.length > 0)
    .map((e) => ({
      applicationId: e.applicationId,
      actorUserId: e.actor.id,
      actorEmail: e.actor.email,
      kind: e.kind,
      subject: e.subject ?? null,
      changes: e.changes.map(redact),
    }));
  if (rows.length === 0) return;
  const ids = [...new Set(rows.map((r) => r.applicationId))];
  const held = await tx
    .select({ id: applications.id, updateSubscribers: applications.updateSubscribers })
    .from(applications)
    .where(inArray(applications.id, ids))
    .for('key share');
  if (held.length < ids.length) throw notFound(apiErrors.applicationNotFound);
  const subscribers = new Map(held.map((a) => [a.id, a.updateSubscribers]));
  const updates = rows.filter((r) => APPLICATION_KINDS.has(r.kind));
  const [first] = updates;
  const announce =
    first && (subscribers.get(first.applicationId) ?? 0) > 0
      ? {
          applicationId: first.applicationId,
          actor: { userId: first.actorUserId, email: first.actorEmail },
          changes: updates.map((u) => ({ kind: u.kind, subject: u.subject, changes: u.changes })),
        }
      : null;
  await tx.insert(applicationChanges).values(rows.map((r) => (r === first ? { ...r, announce } : r)));
}

type Row = typeof applicationChanges.$inferSelect;

function toEntry(row: Row): HistoryEntry {
  return {
    id: row.id,
    at: row.at.getTime() / 1000,
    actor: { userId: row.actorUserId, email: row.actorEmail },
    kind: row.kind as HistoryKind,
    subject: row.subject,
    changes: row.changes,
  };
}

/** Opaque cursor: base64url of [at to the microsecond, seq] of the page's last entry (as the lock log's). */
const cursorTime = cursorTimeOf(applicationChanges.at);

/** An application's history, newest first, keyset-paged over (at, seq); filters by kind and actor. */
export async function listHistory(db: Db, applicationId: string, query: HistoryQuery): Promise<HistoryPage> {
  const pageSize = query.pageSize ?? HISTORY_PAGE_SIZE;
  const conditions = [eq(applicationChanges.applicationId, applicationId)];
  if (query.kind) conditions.push(eq(applicationChanges.kind, query.kind));
  if (query.actor) {
    const actor = query.actor;
    conditions.push(
      isUuid(actor)
        ? or(eq(applicationChanges.actorUserId, actor), sql`lower(${applicationChanges.actorEmail}) = ${actor.toLowerCase()}`)!
        : sql`lower(${applicationChanges.actorEmail}) = ${actor.toLowerCase()}`,
    );
  }
  if (query.cursor) {
    const [time, seq] = decodeCursor(query.cursor, 'seq', historyErrors.invalidCursor);
    conditions.push(sql`(${applicationChanges.at}, ${applicationChanges.seq}) < (${time}::timestamptz, ${seq}::bigint)`);
  }
  const rows = await db
    .select({ row: applicationChanges, cursorTime })
    .from(applicationChanges)
    .where(and(...conditions))
    .orderBy(desc(applicationChanges.at), desc(applicationChanges.seq))
    .limit(pageSize + 1);
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  return {
    items: page.map((r) => toEntry(r.row)),
    nextCursor: rows.length > pageSize && last ? encodeCursor(last.cursorTime, last.row.seq) : null,
  };
}

/**
 * Everyone who appears in the application's history, most recent first, one entry per user (by user id,
 * else by email; the email is the one of their latest entry). Former owners too: the actor filter's
 * choices. Entries with neither an id nor an email (the platform's own) cannot be filtered on: left out.
 */
export async function listActors(db: Db, applicationId: string): Promise<HistoryActor[]> {
  const rows = await db
    .select({ userId: applicationChanges.actorUserId, email: applicationChanges.actorEmail, last: sql<string>`max(${applicationChanges.at})` })
    .from(applicationChanges)
    .where(and(eq(applicationChanges.applicationId, applicationId), sql`(${applicationChanges.actorUserId} is not null or ${applicationChanges.actorEmail} is not null)`))
    .groupBy(applicationChanges.actorUserId, applicationChanges.actorEmail)
    .orderBy(sql`max(${applicationChanges.at}) desc`);
  const seen = new Set<string>();
  const actors: HistoryActor[] = [];
  for (const row of rows) {
    const key = row.userId ?? `email:${row.email!.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    actors.push({ userId: row.userId, email: row.email });
    if (actors.length === HISTORY_MAX_ACTORS) break;
  }
  return actors;
}
