import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { emailPreviewQuerySchema, errorBodySchema } from '@latchkey/contract';
import { renderPreview } from './email-preview.service.js';

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
}
