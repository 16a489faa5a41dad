import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applicationIdParamsSchema, errorBodySchema, outboxEmailParamsSchema, sentEmailSchema } from '@latchkey/contract';
import { PREVIEW_CSP } from '../../lib/preview-csp.js';
import { getOutboxHtml, listOutbox } from './outbox.service.js';

const tags = ['outbox'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const base = '/platform/application/:applicationId/outbox';

/**
 * The Outbox: the emails the platform sent for an application, and (on a service without SMTP) the reader's
 * own account emails, each reader only their own. The HTML is served with the email
 * preview's policy (nothing runs, only the portal may frame it); the portal fetches it with its bearer
 * token and shows it in a sandboxed frame.
 */
export async function outboxRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  app.get(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: z.array(sentEmailSchema), 401: E, 404: E } } },
    async (request) => listOutbox(app.db, request.params.applicationId, request.user.id),
  );

  app.get(
    `${base}/:emailId`,
    {
      ...owner,
      schema: { tags, security, params: outboxEmailParamsSchema, produces: ['text/html'], response: { 200: z.string().describe('text/html'), 401: E, 404: E } },
    },
    async (request, reply) => {
      const html = await getOutboxHtml(app.db, request.params.applicationId, request.user.id, request.params.emailId);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', PREVIEW_CSP)
        .header('x-frame-options', 'SAMEORIGIN')
        .header('cache-control', 'private, no-store')
        .send(html);
    },
  );
}
