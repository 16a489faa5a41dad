import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  createWebhookSchema,
  deliveryIdParamsSchema,
  deliveryQuerySchema,
  errorBodySchema,
  webhookDeliverySchema,
  webhookIdParamsSchema,
  webhookSchema,
  webhookWithSecretSchema,
} from '@latchkey/contract';
import { SecretBox } from '../../lib/secret-box.js';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, resendDelivery, rotateSecret } from './webhooks.service.js';

const tags = ['webhooks'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const base = '/platform/application/:applicationId/webhook';
const one = `${base}/:webhookId`;

/** An application's webhook endpoints, their secrets and delivery logs; owners only (anyone else 404). */
export async function webhooksRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  // Endpoints' signing secrets are stored sealed with SECRETS_ENCRYPTION_KEY.
  const secretBox = new SecretBox(app.config.secretsEncryptionKey);

  app.get(base, { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: z.array(webhookSchema), 401: E, 404: E } } }, async (request) =>
    listWebhooks(app.db, request.params.applicationId),
  );

  app.post(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: createWebhookSchema, response: { 201: webhookWithSecretSchema, 400: E, 401: E, 404: E, 409: E, 422: E } } },
    async (request, reply) => reply.code(201).send(await createWebhook(app.db, secretBox, app.outbound, request.params.applicationId, request.body, request.user)),
  );

  app.delete(one, { ...owner, schema: { tags, security, params: webhookIdParamsSchema, response: { 204: z.null(), 401: E, 404: E } } }, async (request, reply) => {
    await deleteWebhook(app.db, request.params.applicationId, request.params.webhookId, request.user);
    return reply.code(204).send(null);
  });

  app.post(
    `${one}/rotate`,
    { ...owner, schema: { tags, security, params: webhookIdParamsSchema, response: { 200: webhookWithSecretSchema, 401: E, 404: E } } },
    async (request) => rotateSecret(app.db, secretBox, request.params.applicationId, request.params.webhookId, request.user),
  );

  // The documented array, newest first; older pages through the `Link: <…?cursor=…>; rel="next"` header.
  app.get(
    `${one}/delivery`,
    { ...owner, schema: { tags, security, params: webhookIdParamsSchema, querystring: deliveryQuerySchema, response: { 200: z.array(webhookDeliverySchema), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      const { items, nextCursor } = await listDeliveries(app.db, request.params.applicationId, request.params.webhookId, request.query.cursor);
      if (nextCursor) reply.header('link', `<${request.url.split('?')[0]}?cursor=${nextCursor}>; rel="next"`);
      return items;
    },
  );

  app.post(
    `${one}/delivery/:deliveryId/resend`,
    { ...owner, schema: { tags, security, params: deliveryIdParamsSchema, response: { 202: webhookDeliverySchema, 401: E, 404: E } } },
    async (request, reply) => {
      const { applicationId, webhookId, deliveryId } = request.params;
      const delivery = await resendDelivery(app.db, applicationId, webhookId, deliveryId);
      void app.webhooks.relayNow();
      return reply.code(202).send(delivery);
    },
  );
}
