import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorBodySchema, WEBHOOK_TEST_EVENT, WEBHOOK_TEST_LIMIT, webhookDeliverySchema, webhookIdParamsSchema } from '@latchkey/contract';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { queueTestEvent } from './test-event.service.js';

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
