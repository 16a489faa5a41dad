import { and, eq } from 'drizzle-orm';
import {
  WEBHOOK_TEST_EVENT,
  webhookErrors,
  type WebhookDelivery,
  type WebhookPayload,
  isUuid,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { webhookDeliveries, webhooks } from '../../db/schema.js';
import { notFound } from '../../errors.js';

export interface TestEventData {
  webhookId: string;
  applicationId: string;
}

/**
 * A `webhook.test` delivery owed to one endpoint, whatever events it subscribed to. It is an
 * outbox row like every other delivery (outbox.ts), so the relay queues it, a worker signs and sends it
 * with retries, and it shows in the endpoint's delivery log (and can be resent from there).
 */
export async function queueTestEvent(db: Db, applicationId: string, webhookId: string): Promise<WebhookDelivery> {
  if (!isUuid(webhookId)) throw notFound(webhookErrors.webhookNotFound);
  const [hook] = await db
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), eq(webhooks.applicationId, applicationId)))
    .limit(1);
  if (!hook) throw notFound(webhookErrors.webhookNotFound);
  const payload: WebhookPayload<TestEventData> = { type: WEBHOOK_TEST_EVENT, timestamp: new Date().toISOString(), data: { webhookId, applicationId } };
  const [row] = await db.insert(webhookDeliveries).values({ webhookId, applicationId, eventType: WEBHOOK_TEST_EVENT, payload }).returning();
  return {
    id: row!.id,
    eventType: WEBHOOK_TEST_EVENT,
    status: row!.status,
    attempts: row!.attempts,
    responseStatus: row!.responseStatus,
    error: row!.lastError,
    at: row!.createdAt.getTime() / 1000,
  };
}
