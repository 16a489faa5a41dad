import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  authResponseSchema,
  errorBodySchema,
  passkeyOptionsRequestSchema,
  passkeyOptionsSchema,
  passkeyParamsSchema,
  passkeyRegisterSchema,
  passkeySchema,
  passkeySignInSchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import {
  authenticationOptions,
  listPasskeys,
  noticePasskeyAdded,
  registerPasskey,
  registrationOptions,
  removePasskey,
  secondFactorForNewPasskey,
  sessionHasSecondFactor,
  signInWithPasskey,
} from './passkeys.service.js';

const E = errorBodySchema;

/** Passkeys: sign in with one (public), and the account page's list, add and remove. */
export async function passkeyRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const secured = { tags: ['account'], security: [{ bearer: [] }] };
  const perAddress = app.createRateLimit({ keyGenerator: (req) => `passkey-ip:${req.ip}`, max: app.config.rateLimit.loginAddressMax, timeWindow: app.config.rateLimit.loginWindowSeconds * 1000 });
  const limited = { preHandler: async (request: Parameters<typeof perAddress>[0]) => refuseIfExceeded(await perAddress(request)) };

  app.post(
    '/auth/passkey/options',
    { ...limited, config: { public: true }, schema: { tags: ['auth'], summary: 'WebAuthn options for a passkey sign-in', response: { 200: passkeyOptionsSchema, 429: E } } },
    async () => (await authenticationOptions(app)) as unknown as Record<string, unknown>,
  );
  app.post(
    '/auth/passkey',
    {
      ...limited,
      config: { public: true },
      schema: { tags: ['auth'], summary: 'Signs in with a passkey (counts as the second factor for new keys)', body: passkeySignInSchema, response: { 200: authResponseSchema, 400: E, 401: E, 429: E } },
    },
    async (request) => signInWithPasskey(app, request.body.response, request.headers['user-agent'] ?? null),
  );
  app.get('/account/passkeys', { onRequest: app.authenticate, schema: { ...secured, response: { 200: z.array(passkeySchema), 401: E } } }, async (request) =>
    listPasskeys(app, request.user.id),
  );
  // Asking without a code emails one: a few an hour per account, so a stolen password cannot flood the inbox.
  const codeEmails = app.createRateLimit({ keyGenerator: (req) => `passkey-code:${req.user.id}`, max: 5, timeWindow: 3_600_000 });
  app.post(
    '/account/passkeys/options',
    {
      onRequest: app.authenticate,
      preHandler: async (request) => {
        if (request.body?.code === undefined && !(await sessionHasSecondFactor(app, request.user.sessionId))) refuseIfExceeded(await codeEmails(request));
      },
      schema: {
        ...secured,
        summary:
          'WebAuthn options to add a passkey. A session that signed in with a passkey gets them at once; any other sends the six-digit code emailed to the account (asked for without one: 423, and the code is emailed)',
        body: passkeyOptionsRequestSchema,
        response: { 200: passkeyOptionsSchema, 400: E, 401: E, 423: E, 429: E },
      },
    },
    async (request) => {
      await secondFactorForNewPasskey(app, request.user, request.body?.code, pickLanguage(request.headers['accept-language']));
      return (await registrationOptions(app, request.user.id)) as unknown as Record<string, unknown>;
    },
  );
  app.post(
    '/account/passkeys',
    {
      onRequest: app.authenticate,
      schema: { ...secured, summary: 'Adds a passkey (with a challenge from the options, which need the second factor); emails the account a notice', body: passkeyRegisterSchema, response: { 201: passkeySchema, 400: E, 401: E, 409: E } },
    },
    async (request, reply) => {
      const passkey = await registerPasskey(app, request.user.id, request.body.response, request.body.name);
      noticePasskeyAdded(app, request.user.id, passkey, pickLanguage(request.headers['accept-language']));
      return reply.code(201).send(passkey);
    },
  );
  app.delete(
    '/account/passkeys/:passkeyId',
    { onRequest: app.authenticate, schema: { ...secured, params: passkeyParamsSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      await removePasskey(app, request.user.id, request.params.passkeyId);
      return reply.code(204).send(null);
    },
  );
}
