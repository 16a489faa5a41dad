import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  certificateRequestSchema,
  certificateResponseSchema,
  errorBodySchema,
  keyVerificationCheckSchema,
  keyVerificationQuerySchema,
  keyVerificationResponseSchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { refuseEndedTileSignIn } from '../shares/shares.service.js';
import { issueCertificate } from './certificates.service.js';
import { checkKeyCode, requestKeyCode } from './key-verification.js';

/** POST /auth/certificate (a portal or an application-signed user token). */
export async function certificatesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { certificateMax, certificateWindowSeconds } = app.config.rateLimit;
  const issuer = { ca: app.platformCa, db: app.db, tokenKeys: () => app.tokens.keys.jwks() };
  app.post(
    '/auth/certificate',
    {
      onRequest: app.authenticateLockUser,
      // A tile's sign-in certifies keys only while its user still holds a share.
      preHandler: async (request) => refuseEndedTileSignIn(app.db, request.lockUser),
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
        response: { 200: certificateResponseSchema, 400: errorBodySchema, 401: errorBodySchema, 423: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request) => issueCertificate(issuer, request.lockUser, request.body.ephemeralKey, { sessionId: request.lockUser.kind === 'portal' ? request.user.sessionId : undefined }),
  );

  // The second factor a portal account's new key needs (key-verification.ts). Codes are emails:
  // a few per user and hour; checks issue certificates, so they count like certificates do.
  const codeRequests = app.createRateLimit({ keyGenerator: (request) => `key-code:${request.lockUser.id}`, max: 5, timeWindow: 3_600_000 });
  app.post(
    '/auth/certificate/verify',
    {
      onRequest: app.authenticateLockUser,
      preHandler: async (request) => refuseIfExceeded(await codeRequests(request)),
      schema: {
        tags: ['lock users'],
        summary: 'Emails a six-digit code for a new key (the second factor after a 423 from /auth/certificate)',
        security: [{ bearer: [] }],
        querystring: keyVerificationQuerySchema,
        body: certificateRequestSchema,
        response: { 200: keyVerificationResponseSchema, 400: errorBodySchema, 401: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request) => requestKeyCode(app, issuer, request.lockUser, request.body.ephemeralKey, pickLanguage(request.headers['accept-language'])),
  );
  app.post(
    '/auth/certificate/check',
    {
      onRequest: app.authenticateLockUser,
      config: {
        rateLimit: { max: certificateMax, timeWindow: certificateWindowSeconds * 1000, hook: 'preHandler', keyGenerator: (request) => `cert-check:${request.lockUser.id}` },
      },
      schema: {
        tags: ['lock users'],
        summary: 'The emailed code signed with the new key’s private key: answers the certificate chain',
        security: [{ bearer: [] }],
        body: keyVerificationCheckSchema,
        response: { 200: certificateResponseSchema, 400: errorBodySchema, 401: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request) => checkKeyCode(app, issuer, request.lockUser, request.body.verificationSignature),
  );
}
