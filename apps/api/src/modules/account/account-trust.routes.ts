import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  accountErrors,
  authResponseSchema,
  errorBodySchema,
  passwordResetInitializeSchema,
  passwordResetVerifySchema,
  verifyEmailBodySchema,
  verifyEmailQuerySchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { badRequest } from '../../errors.js';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { accountManagementRoutes } from './account-management.routes.js';
import { passkeyRoutes } from './passkeys.routes.js';
import { afterReply, initializePasswordReset, reverifyEmail, verifyEmail, verifyPasswordReset } from './account-trust.service.js';

const E = errorBodySchema;
const HOUR = 3_600_000;
/** Reset requests: per address (many emails from one place) and per email (one inbox flooded). */
export const PASSWORD_RESET_LIMITS = { perAddress: 20, perEmail: 3, windowMs: HOUR } as const;

/**
 * Forgot password and email verification, on the paths the platform's headless SDK calls
 * (Paths.kt: /account/password/reset/initialize, /account/password/reset/verify, /account/email/verify,
 * /account/email/reverify). The public ones answer an outsider the same whether or not an account exists.
 */
export async function accountTrustRoutes(app: FastifyInstance) {
  await app.register(accountManagementRoutes);
  await app.register(passkeyRoutes);
  // Using a link: per address (secrets are 256 bits; this only keeps a flood off the password hasher).
  // One limit for both kinds of link.
  const linkUses = app.createRateLimit({ keyGenerator: (req) => `account-link-ip:${req.ip}`, max: 30, timeWindow: HOUR / 4 });
  passwordResetRoutes(app, linkUses);
  emailVerificationRoutes(app, linkUses);
}

type RateLimit = ReturnType<FastifyInstance['createRateLimit']>;

/** Forgot password: the emailed link asked for, then spent on a new password. */
function passwordResetRoutes(instance: FastifyInstance, linkUses: RateLimit) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const perAddress = app.createRateLimit({ keyGenerator: (req) => `reset-ip:${req.ip}`, max: PASSWORD_RESET_LIMITS.perAddress, timeWindow: PASSWORD_RESET_LIMITS.windowMs });
  const perEmail = app.createRateLimit({
    keyGenerator: (req) => `reset-email:${String((req.body as { email?: unknown } | undefined)?.email ?? '').toLowerCase()}`,
    max: PASSWORD_RESET_LIMITS.perEmail,
    timeWindow: PASSWORD_RESET_LIMITS.windowMs,
  });

  app.post(
    '/account/password/reset/initialize',
    {
      config: { public: true },
      preHandler: async (request) => {
        refuseIfExceeded(await perAddress(request));
        refuseIfExceeded(await perEmail(request));
      },
      schema: {
        tags: ['account'],
        summary: 'Forgot password: emails a single-use reset link (30 minutes) if the address has an account; the answer is the same either way',
        body: passwordResetInitializeSchema,
        response: { 204: z.null(), 400: E, 429: E },
      },
    },
    async (request, reply) => {
      const language = pickLanguage(request.headers['accept-language']);
      // After the answer: an unknown address takes exactly as long as a known one.
      afterReply(app, () => initializePasswordReset(app, request.body.email, language));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/account/password/reset/verify',
    {
      config: { public: true },
      preHandler: async (request) => refuseIfExceeded(await linkUses(request)),
      schema: {
        tags: ['account'],
        summary: 'Sets a new password with the emailed link: every session of the account ends, and the answer signs in',
        body: passwordResetVerifySchema,
        response: { 200: authResponseSchema, 400: E, 429: E },
      },
    },
    async (request) => verifyPasswordReset(app, request.body, request.headers['user-agent'] ?? null),
  );
}

/** The account's email address proved with the emailed code, and a new code asked for. */
function emailVerificationRoutes(instance: FastifyInstance, linkUses: RateLimit) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const reverifies = app.createRateLimit({ keyGenerator: (req) => `reverify:${req.user.id}`, max: 5, timeWindow: HOUR });

  app.put(
    '/account/email/verify',
    {
      config: { public: true },
      preHandler: async (request) => refuseIfExceeded(await linkUses(request)),
      schema: {
        tags: ['account'],
        summary: 'Proves the account’s email address with the emailed code: in the body (`{code}`), or in the query as the SDKs send it',
        querystring: verifyEmailQuerySchema,
        body: verifyEmailBodySchema,
        response: { 204: z.null(), 400: E, 429: E },
      },
    },
    async (request, reply) => {
      const code = request.body?.code ?? request.query.code;
      if (!code) throw badRequest(accountErrors.verifyCodeMissing);
      await verifyEmail(app, code);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/account/email/reverify',
    {
      onRequest: app.authenticate,
      preHandler: async (request) => refuseIfExceeded(await reverifies(request)),
      schema: {
        tags: ['account'],
        summary: 'Sends a new verification link (nothing when the address is verified already)',
        security: [{ bearer: [] }],
        response: { 204: z.null(), 401: E, 429: E },
      },
    },
    async (request, reply) => {
      await reverifyEmail(app, request.user.id, pickLanguage(request.headers['accept-language']));
      return reply.code(204).send(null);
    },
  );
}
