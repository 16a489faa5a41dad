import { sql, type SQL } from 'drizzle-orm';
import type { WebhookEvent, WebhookPayload } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { webhookDeliveries, webhooks } from '../db/schema.js';

/**
 * THE way a module announces an event to webhooks: call it with the transaction that makes the change.
 * One statement writes a delivery row for each of the application's endpoints subscribed to `type`
 * (none: nothing written, one index probe); the rows commit with the change or not at all, and the
 * relay (delivery.ts) hands them to the job queue after the commit. Nothing is lost between the two:
 * the row is the record that a delivery is owed.
 */
export async function publishEvent<T>(tx: Db, applicationId: string, type: WebhookEvent, data: T): Promise<void> {
  await tx.execute(publishEventStatement(applicationId, type, data));
}

/** publishEvent's statement, for a caller that makes its change in the same statement (a CTE). */
export function publishEventStatement<T>(applicationId: string, type: WebhookEvent, data: T): SQL {
  const payload: WebhookPayload<T> = { type, timestamp: new Date().toISOString(), data };
  return sql`
    insert into ${webhookDeliveries} (webhook_id, application_id, event_type, payload)
    select ${webhooks.id}, ${webhooks.applicationId}, ${type}, ${JSON.stringify(payload)}::jsonb
    from ${webhooks}
    where ${webhooks.applicationId} = ${applicationId} and ${webhooks.events} ? ${type}`;
}

/** An event's `timestamp` as SQL, from a timestamptz expression: ISO 8601 in UTC with milliseconds. */
export const eventTimestampOf = (at: string): string => `to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The same as SQL, for statements that write many changes at once (the batched unlocks in
 * operations/mutate-lock.ts): inserts one delivery per (row of `source`, subscribed endpoint). `source`
 * must yield `application_id` and `data` (jsonb).
 */
export function publishEventsSql(type: WebhookEvent, source: string): string {
  return `insert into webhook_deliveries (webhook_id, application_id, event_type, payload)
    select w.id, w.application_id, '${type}', jsonb_build_object('type', '${type}', 'timestamp', ${eventTimestampOf('now()')}, 'data', s.data)
    from (${source}) s join webhooks w on w.application_id = s.application_id and w.events ? '${type}'`;
}
