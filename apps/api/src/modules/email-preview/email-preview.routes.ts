import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  emailPreviewQuerySchema,
  errorBodySchema,
  TEST_EMAIL_LIMIT,
  testEmailBodySchema,
  testEmailResultSchema,
} from '@latchkey/contract';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { renderPreview } from './email-preview.service.js';
import { sendTestEmail } from './test-email.js';

/**
 * Nothing in the page may run or load except images; only the portal (same origin) may frame it.
 * No script-src at all: default-src 'none' covers it.
 */
export const PREVIEW_CSP = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

/** GET /email/preview/{applicationId} (spec §7): the branded sample email, as the portal's frame source. */
export async function emailPreviewRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/email/preview/:applicationId',
    {
      config: { public: true },
      schema: {
        tags: ['email'],
        summary: 'Branded email preview (HTML) with optional overrides; empty values are ignored',
        params: z.object({ applicationId: z.string().max(100) }),
        querystring: emailPreviewQuerySchema,
        produces: ['text/html'],
        response: { 200: z.string().describe('text/html'), 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const html = await renderPreview(app.db, request.params.applicationId, request.query);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', PREVIEW_CSP)
        .header('x-frame-options', 'SAMEORIGIN')
        .header('cache-control', 'no-cache')
        .send(html);
    },
  );

  // Issue 19: the card's unsaved branding, as the sample email, to the signed-in owner. A few per owner
  // and window (on top of the general limit): it sends real mail when SMTP is configured.
  const perOwner = app.createRateLimit({
    keyGenerator: (request) => `test-email:${request.user.id}`,
    max: TEST_EMAIL_LIMIT.max,
    timeWindow: TEST_EMAIL_LIMIT.windowSeconds * 1000,
  });
  app.post(
    '/platform/application/:applicationId/email/test',
    {
      onRequest: [app.authenticate, app.requireOwner],
      preHandler: async (request) => refuseIfExceeded(await perOwner(request)),
      schema: {
        tags: ['email'],
        summary: 'Send the sample email in the given (unsaved) branding to the signed-in owner',
        security: [{ bearer: [] }],
        params: applicationIdParamsSchema,
        body: testEmailBodySchema,
        response: { 200: testEmailResultSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema, 422: errorBodySchema, 429: errorBodySchema, 502: errorBodySchema },
      },
    },
    async (request) => sendTestEmail(app, request.params.applicationId, request.user.email, request.body),
  );
}
