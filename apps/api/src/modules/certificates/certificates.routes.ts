import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { certificateRequestSchema, certificateResponseSchema, errorBodySchema } from '@latchkey/contract';
import { issueCertificate } from './certificates.service.js';

/** POST /auth/certificate (a portal or an application-signed user token). */
export async function certificatesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/auth/certificate',
    {
      onRequest: app.authenticateLockUser,
      schema: {
        tags: ['lock users'],
        security: [{ bearer: [] }],
        body: certificateRequestSchema,
        response: { 200: certificateResponseSchema, 400: errorBodySchema, 401: errorBodySchema },
      },
    },
    async (request) => issueCertificate(app.platformCa, request.lockUser, request.body.ephemeralKey),
  );
}
