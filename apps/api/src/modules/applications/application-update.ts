import { sql } from 'drizzle-orm';
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
 * The application update in ONE statement, so recording it costs no extra round trip (issue 19's
 * budget, bench/history-overhead.ts): the row is read locked and updated (`upd`, the old and new value
 * of each given column), each changed column becomes a {field, before, after} of its kind (`diff`), one
 * history entry per kind is written (`hist`, the rows history.service's recordChange writes), and
 * application.updated is queued for every subscribed webhook (the rows outbox.ts publishEvent writes).
 * Atomic like any statement: all of it or none. Answers whether the application exists.
 */
export async function updateWithHistory(db: Db, applicationId: string, set: Columns, by: ChangeActor): Promise<boolean> {
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
    keys.map((k, i) => sql`old.${column(k)} as ${sql.identifier(`b${i}`)}, a.${column(k)} as ${sql.identifier(`n${i}`)}`),
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
  // The old row is read in the UPDATE's own FROM, locked: a CTE reading it beside the UPDATE would find
  // the row already changed by this statement and skip it.
  const result = await db.execute(sql`
    with upd as (
      update ${applications} a set ${assignments}, version = a.version + 1, updated_at = now()
      from (select * from ${applications} where id = ${applicationId} for update) old
      where a.id = old.id
      returning ${returning}
    ), diff as (
      select k.kind, k.changes from upd, lateral (values ${perKind}) as k(kind, changes) where k.changes <> '[]'::jsonb
    ), hist as (
      insert into application_changes (application_id, actor_user_id, actor_email, kind, changes)
      select ${applicationId}, ${by.id}::uuid, ${by.email}, kind, changes from diff
      returning kind, subject, changes
    ), announced as (
      insert into webhook_deliveries (webhook_id, application_id, event_type, payload)
      select w.id, w.application_id, 'application.updated', jsonb_build_object('type', 'application.updated', 'timestamp', ${eventTimestampSql}, 'data',
        jsonb_build_object('applicationId', ${applicationId}::uuid, 'actor', jsonb_build_object('userId', ${by.id}::uuid, 'email', ${by.email}::text),
          'changes', (select jsonb_agg(jsonb_build_object('kind', kind, 'subject', subject, 'changes', changes)) from hist)))
      from webhooks w
      where w.application_id = ${applicationId} and w.events ? 'application.updated' and exists (select 1 from hist)
      returning 1
    )
    select count(*)::int as found from upd`);
  const rows = (result as unknown as { rows: { found: number }[] }).rows;
  return (rows[0]?.found ?? 0) > 0;
}
