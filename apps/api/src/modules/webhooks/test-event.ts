import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq } from 'drizzle-orm';
import {
  errorBodySchema,
  WEBHOOK_TEST_EVENT,
  WEBHOOK_TEST_LIMIT,
  webhookDeliverySchema,
  webhookErrors,
  webhookIdParamsSchema,
  type WebhookDelivery,
  type WebhookPayload,
  isUuid,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { webhookDeliveries, webhooks } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';


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

/** `POST …/webhook/{webhookId}/test`: owners only (anyone else 404), a few per owner and window. */
export async function webhookTestEventRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const perOwner = app.createRateLimit({
    keyGenerator: (request) => `webhook-test:${request.user.id}`,
    max: WEBHOOK_TEST_LIMIT.max,
    timeWindow: WEBHOOK_TEST_LIMIT.windowSeconds * 1000,
  });
  app.post(
    '/platform/application/:applicationId/webhook/:webhookId/test',
    {
      onRequest: [app.authenticate, app.requireOwner],
      preHandler: async (request) => refuseIfExceeded(await perOwner(request)),
      schema: {
        tags: ['webhooks'],
        summary: `Send a signed ${WEBHOOK_TEST_EVENT} event to this endpoint (queued like any delivery; it shows in the delivery log)`,
        security: [{ bearer: [] }],
        params: webhookIdParamsSchema,
        response: { 202: webhookDeliverySchema, 401: errorBodySchema, 404: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const delivery = await queueTestEvent(app.db, request.params.applicationId, request.params.webhookId);
      void app.webhooks.relayNow();
      return reply.code(202).send(delivery);
    },
  );
}
