import { sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { HistoryKind } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applications } from '../../db/schema.js';
import type { ChangeActor } from '../history/history.service.js';
import { eventTimestampSql } from '../webhooks/outbox.js';

type Columns = Partial<typeof applications.$inferInsert>;

/** Each column's field name on the wire and the kind of change it belongs to in the history. */
export const historyFields: Record<string, [field: string, kind: HistoryKind]> = {
  name: ['name', 'details'],
  companyName: ['companyName', 'details'],
  mailingAddress: ['mailingAddress', 'details'],
  privacyPolicy: ['privacyPolicy', 'urls'],
  supportContact: ['supportContact', 'urls'],
  appLink: ['appLink', 'urls'],
  logoUrl: ['logoUrl', 'logo'],
  senderEmail: ['emailPreferences.senderEmail', 'branding'],
  senderName: ['emailPreferences.senderName', 'branding'],
  primaryColour: ['emailPreferences.primaryColour', 'branding'],
  secondaryColour: ['emailPreferences.secondaryColour', 'branding'],
  onlySendEssentialEmails: ['emailPreferences.onlySendEssentialEmails', 'branding'],
  callToAction: ['emailPreferences.callToAction', 'branding'],
};

const column = (key: string) => sql.identifier((applications as unknown as Record<string, { name: string }>)[key]!.name);

/**
 * Which applications this instance last saw with a webhook subscribed to application.updated. A hint
 * that only picks which form of the statement to send, never whether an event is written: the form for
 * an application without a subscriber checks, in the same statement, that there still is none, and
 * changes nothing when there is (the update is then sent again in the full form). So a hint that is
 * stale, or another instance's webhook this one has never heard of, costs a round trip, never an event.
 */
export class AnnouncementHints {
  private readonly subscribed = new LRUCache<string, true>({ max: 50_000 });
  has(applicationId: string): boolean {
    return this.subscribed.has(applicationId);
  }
  set(applicationId: string, subscribed: boolean): void {
    if (subscribed) this.subscribed.set(applicationId, true);
    else this.subscribed.delete(applicationId);
  }
}

/**
 * The application update in ONE statement, so recording it costs no extra round trip (issue 19's
 * budget, bench/history-overhead.ts): the row is read locked and updated (`upd`, the old and new value
 * of each given column), each changed column becomes a {field, before, after} of its kind (`diff`), one
 * history entry per kind is written (`hist`, the rows history.service's recordChange writes), and
 * application.updated is queued for every subscribed webhook (the rows outbox.ts publishEvent writes).
 * Atomic like any statement: all of it or none. Answers whether the application exists.
 *
 * With `hints`, an application not known to have a subscriber gets the statement without the event
 * insert (about a third of the statement's cost when nothing is subscribed, docs/performance.md) but
 * guarded by `not exists` a subscribed webhook, evaluated in the statement's own snapshot as the full
 * form's insert would be: if one exists the statement updates nothing, and the full form follows.
 */
export async function updateWithHistory(db: Db, applicationId: string, set: Columns, by: ChangeActor, options: UpdateOptions = {}): Promise<boolean> {
  const { hints } = options;
  if (hints && !hints.has(applicationId)) {
    const { found } = await runUpdate(db, applicationId, set, by, 'unless-subscribed', options);
    if (found) return true;
    // No such application, or a webhook is subscribed after all.
    hints.set(applicationId, true);
  }
  const { found, recorded, announced } = await runUpdate(db, applicationId, set, by, 'announce', options);
  if (found && recorded) hints?.set(applicationId, announced > 0);
  return found;
}

export interface UpdateOptions {
  hints?: AnnouncementHints;
  /**
   * The server has RETURNING old.* (PostgreSQL 18, so PGlite): the old values come from the UPDATE
   * itself, with no locked self-join to read them (about 0.1 ms less a statement, docs/performance.md).
   */
  returningOld?: boolean;
}

async function runUpdate(
  db: Db,
  applicationId: string,
  set: Columns,
  by: ChangeActor,
  form: 'announce' | 'unless-subscribed',
  { returningOld = false }: UpdateOptions,
): Promise<{ found: boolean; recorded: number; announced: number }> {
  const keys = Object.keys(set).filter((k) => historyFields[k]);
  const assignments = sql.join(
    keys.map((k) => {
      const value = (set as Record<string, unknown>)[k];
      return k === 'callToAction' ? sql`${column(k)} = ${value == null ? null : JSON.stringify(value)}::jsonb` : sql`${column(k)} = ${value ?? null}`;
    }),
    sql`, `,
  );
  // Old and new value of each given column, side by side (b0, n0, b1, n1 …), and per kind of change a
  // JSON array of the columns whose value changed (empty when none did: that kind records nothing).
  const returning = sql.join(
    keys.map((k, i) => sql`old.${column(k)} as ${sql.identifier(`b${i}`)}, ${returningOld ? sql`new` : sql`a`}.${column(k)} as ${sql.identifier(`n${i}`)}`),
    sql`, `,
  );
  const kinds = [...new Set(keys.map((k) => historyFields[k]![1]))];
  const perKind = sql.join(
    kinds.map((kind) => {
      const items = keys.flatMap((k, i) => {
        if (historyFields[k]![1] !== kind) return [];
        const [b, n] = [sql.identifier(`b${i}`), sql.identifier(`n${i}`)];
        return [sql`case when ${b} is distinct from ${n} then jsonb_build_object('field', ${historyFields[k]![0]}::text, 'before', to_jsonb(${b}), 'after', to_jsonb(${n})) end`];
      });
      return sql`(${kind}::text, to_jsonb(array_remove(array[${sql.join(items, sql`, `)}]::jsonb[], null)))`;
    }),
    sql`, `,
  );
  const subscribed = sql`select 1 from webhooks w where w.application_id = ${applicationId} and w.events ? 'application.updated'`;
  const announced =
    form === 'announce'
      ? sql`, announced as (
      insert into webhook_deliveries (webhook_id, application_id, event_type, payload)
      select w.id, w.application_id, 'application.updated', jsonb_build_object('type', 'application.updated', 'timestamp', ${eventTimestampSql}, 'data',
        jsonb_build_object('applicationId', ${applicationId}::uuid, 'actor', jsonb_build_object('userId', ${by.id}::uuid, 'email', ${by.email}::text),
          'changes', (select jsonb_agg(jsonb_build_object('kind', kind, 'subject', subject, 'changes', changes)) from hist)))
      from webhooks w
      where w.application_id = ${applicationId} and w.events ? 'application.updated' and exists (select 1 from hist)
      returning 1
    )`
      : sql``;
  // Before PostgreSQL 18 the old row is read in the UPDATE's own FROM, locked: a CTE reading it beside
  // the UPDATE would find the row already changed by this statement and skip it.
  const target = returningOld
    ? sql`where a.id = ${applicationId}`
    : sql`from (select * from ${applications} where id = ${applicationId} for update) old
      where a.id = old.id`;
  const result = await db.execute(sql`
    with upd as (
      update ${applications} a set ${assignments}, version = a.version + 1, updated_at = now()
      ${target}${form === 'unless-subscribed' ? sql` and not exists (${subscribed})` : sql``}
      returning ${returning}
    ), diff as (
      select k.kind, k.changes from upd, lateral (values ${perKind}) as k(kind, changes) where k.changes <> '[]'::jsonb
    ), hist as (
      insert into application_changes (application_id, actor_user_id, actor_email, kind, changes)
      select ${applicationId}, ${by.id}::uuid, ${by.email}, kind, changes from diff
      returning kind, subject, changes
    )${announced}
    select (select count(*) from upd)::int as found, (select count(*) from hist)::int as recorded, ${form === 'announce' ? sql`(select count(*) from announced)::int` : sql`0`} as announced`);
  const [row] = (result as unknown as { rows: { found: number; recorded: number; announced: number }[] }).rows;
  return { found: (row?.found ?? 0) > 0, recorded: row?.recorded ?? 0, announced: row?.announced ?? 0 };
}
