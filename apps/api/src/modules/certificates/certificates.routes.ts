import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { certificateRequestSchema, certificateResponseSchema, errorBodySchema } from '@latchkey/contract';
import { issueCertificate } from './certificates.service.js';

/** POST /auth/certificate (a portal or an application-signed user token). */
export async function certificatesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { certificateMax, certificateWindowSeconds } = app.config.rateLimit;
  const issuer = { ca: app.platformCa, db: app.db, tokenKeys: () => app.tokens.keys.jwks() };
  app.post(
    '/auth/certificate',
    {
      onRequest: app.authenticateLockUser,
      config: {
        // Each certificate is a CA signature: CERTIFICATE_RATE_LIMIT_MAX per lock user and window, counted
        // once the user is known (shared through Redis when configured), on top of the per-request limit.
        rateLimit: {
          max: certificateMax,
          timeWindow: certificateWindowSeconds * 1000,
          hook: 'preHandler',
          keyGenerator: (request) => `cert:${request.lockUser.id}`,
        },
      },
      schema: {
        tags: ['lock users'],
        security: [{ bearer: [] }],
        body: certificateRequestSchema,
        response: { 200: certificateResponseSchema, 400: errorBodySchema, 401: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request) => issueCertificate(issuer, request.lockUser, request.body.ephemeralKey),
  );
}
