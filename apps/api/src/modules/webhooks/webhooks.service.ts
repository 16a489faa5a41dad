import { randomBytes } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import {
  MAX_WEBHOOKS_PER_APPLICATION,
  REDACTED,
  WEBHOOK_DELIVERY_PAGE_SIZE,
  WEBHOOK_SECRET_PREFIX,
  webhookErrors,
  type CreateWebhook,
  type Webhook,
  type WebhookDelivery,
  type WebhookEvent,
  type WebhookWithSecret,
  isUuid,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { webhookDeliveries, webhooks } from '../../db/schema.js';
import { conflict, notFound } from '../../errors.js';
import type { Outbound } from '../../lib/outbound.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { recordChange, type ChangeActor } from '../history/history.service.js';
import { cursorTimeOf, decodeCursor, encodeCursor } from '../../lib/keyset-cursor.js';

type Row = typeof webhooks.$inferSelect;
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** A new signing secret: whsec_ + 32 random bytes in base64 (Standard Webhooks). */
export const newSecret = () => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

const toWebhook = (row: Row): Webhook => ({ id: row.id, url: row.url, events: row.events as WebhookEvent[], createdAt: seconds(row.createdAt) });

export async function listWebhooks(db: Db, applicationId: string): Promise<Webhook[]> {
  const rows = await db.select().from(webhooks).where(eq(webhooks.applicationId, applicationId)).orderBy(webhooks.createdAt, webhooks.id);
  return rows.map(toWebhook);
}

async function getRow(db: Db, applicationId: string, webhookId: string): Promise<Row> {
  if (!isUuid(webhookId)) throw notFound(webhookErrors.webhookNotFound);
  const [row] = await db.select().from(webhooks).where(and(eq(webhooks.id, webhookId), eq(webhooks.applicationId, applicationId))).limit(1);
  if (!row) throw notFound(webhookErrors.webhookNotFound);
  return row;
}

/**
 * Registers an endpoint. Its URL must be one the outbound guard would call (https, public addresses;
 * checked now, and again at every delivery); the answer carries the secret, the only time it is shown.
 */
export async function createWebhook(db: Db, box: SecretBox, outbound: Outbound, applicationId: string, input: CreateWebhook, by: ChangeActor): Promise<WebhookWithSecret> {
  const url = (await outbound.checkOutboundUrl(input.url)).toString();
  const events = [...new Set(input.events)];
  const secret = newSecret();
  return db.transaction(async (tx) => {
    // Serialises registrations for one application, so the limit and one endpoint per URL hold under
    // concurrent adds. The URL is compared as stored, normalised by the guard (host in lower case …):
    // the same receiver twice would get every event twice, under different webhook-ids.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`webhooks:${applicationId}`}))`);
    const existing = await tx.select({ url: webhooks.url }).from(webhooks).where(eq(webhooks.applicationId, applicationId));
    if (existing.some((w) => w.url === url)) throw conflict(webhookErrors.urlExists);
    if (existing.length >= MAX_WEBHOOKS_PER_APPLICATION) throw conflict(webhookErrors.tooMany);
    const [row] = await tx.insert(webhooks).values({ applicationId, url, events, secret: box.seal(secret) }).returning();
    await recordChange(tx, {
      applicationId,
      actor: by,
      kind: 'webhook',
      subject: url,
      changes: [
        { field: 'url', before: null, after: url },
        { field: 'events', before: null, after: events },
        { field: 'secret', before: null, after: REDACTED },
      ],
    });
    return { ...toWebhook(row!), secret };
  });
}

/** A new secret at once: deliveries from now on are signed with it, and only it. */
export async function rotateSecret(db: Db, box: SecretBox, applicationId: string, webhookId: string, by: ChangeActor): Promise<WebhookWithSecret> {
  const secret = newSecret();
  return db.transaction(async (tx) => {
    const row = await getRow(tx, applicationId, webhookId);
    await tx.update(webhooks).set({ secret: box.seal(secret), updatedAt: sql`now()` }).where(eq(webhooks.id, row.id));
    await recordChange(tx, { applicationId, actor: by, kind: 'webhook', subject: row.url, changes: [{ field: 'secret', before: REDACTED, after: REDACTED }] });
    return { ...toWebhook(row), secret };
  });
}

/** Deletes the endpoint and its delivery log; deliveries still queued find it gone and stop. */
export async function deleteWebhook(db: Db, applicationId: string, webhookId: string, by: ChangeActor): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await getRow(tx, applicationId, webhookId);
    await tx.delete(webhooks).where(eq(webhooks.id, row.id));
    await recordChange(tx, {
      applicationId,
      actor: by,
      kind: 'webhook',
      subject: row.url,
      changes: [
        { field: 'url', before: row.url, after: null },
        { field: 'events', before: row.events, after: null },
      ],
    });
  });
}

type DeliveryRow = typeof webhookDeliveries.$inferSelect;
const toDelivery = (d: DeliveryRow): WebhookDelivery => ({
  id: d.id,
  eventType: d.eventType as WebhookEvent,
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  error: d.lastError,
  at: d.createdAt.getTime() / 1000,
});

/** Opaque cursor: base64url of [createdAt to the microsecond, id] of the page's last delivery. */
const cursorTime = cursorTimeOf(webhookDeliveries.createdAt);

/**
 * The endpoint's deliveries, newest first, a page at a time (keyset over createdAt, id); `nextCursor`
 * is null on the last page.
 */
export async function listDeliveries(
  db: Db,
  applicationId: string,
  webhookId: string,
  cursor?: string,
): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const after = cursor ? decodeCursor(cursor, 'uuid', webhookErrors.invalidCursor) : null;
  await getRow(db, applicationId, webhookId);
  const rows = await db
    .select({ row: webhookDeliveries, cursorTime })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhookId),
        after ? sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(WEBHOOK_DELIVERY_PAGE_SIZE + 1);
  const page = rows.slice(0, WEBHOOK_DELIVERY_PAGE_SIZE);
  const last = page.at(-1);
  return {
    items: page.map((r) => toDelivery(r.row)),
    nextCursor: rows.length > WEBHOOK_DELIVERY_PAGE_SIZE && last ? encodeCursor(last.cursorTime, last.row.id) : null,
  };
}

/**
 * Delivers again what was delivered (or failed): the same body and `webhook-id`, so a receiver that
 * already has it can tell. It is owed again from now: the relay queues it, with a full set of retries.
 */
export async function resendDelivery(db: Db, applicationId: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
  await getRow(db, applicationId, webhookId);
  if (!isUuid(deliveryId)) throw notFound(webhookErrors.deliveryNotFound);
  const [row] = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', relayAfter: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .returning();
  if (!row) throw notFound(webhookErrors.deliveryNotFound);
  return toDelivery(row);
}
