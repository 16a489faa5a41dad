import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  authResponseSchema,
  errorBodySchema,
  loginSchema,
  refreshResponseSchema,
  registerQuerySchema,
  registerSchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { bearerToken } from '../../plugins/auth.js';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { destroyAllSessions, destroySession, login, refresh, register } from './auth.service.js';

const errors = { 400: errorBodySchema, 401: errorBodySchema, 429: errorBodySchema };

/** /auth/* — mounted with prefix /auth under the API prefix. */
export async function authRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { loginMax, loginWindowSeconds, loginAddressMax } = app.config.rateLimit;
  // Per address across every email (password spraying: one address trying many accounts). Together with
  // the per address + email limit below; neither is per email alone, so a stranger limited on someone's
  // email never locks its owner out from another address. Shared through Redis like the others.
  const perAddress = app.createRateLimit({ keyGenerator: (req) => `login-ip:${req.ip}`, max: loginAddressMax, timeWindow: loginWindowSeconds * 1000 });

  app.post(
    '/register',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        querystring: registerQuerySchema,
        body: registerSchema,
        // `force` is accepted and changes nothing: a pending invitation is claimed only with its code (docs/decisions/0009-register-force.md).
        response: { 200: authResponseSchema, 409: errorBodySchema, ...errors },
      },
    },
    async (request) =>
      register(app, request.body, request.query.force, {
        userAgent: request.headers['user-agent'] ?? null,
        language: pickLanguage(request.headers['accept-language']),
      }),
  );

  app.post(
    '/token',
    {
      preHandler: async (request) => refuseIfExceeded(await perAddress(request)),
      config: {
        public: true,
        // Per IP and email, counted after the body is parsed; shared through Redis when configured.
        rateLimit: {
          max: loginMax,
          timeWindow: loginWindowSeconds * 1000,
          hook: 'preHandler',
          keyGenerator: (req) => `login:${req.ip}:${String((req.body as { email?: unknown } | undefined)?.email ?? '').toLowerCase()}`,
        },
      },
      schema: { tags: ['auth'], body: loginSchema, response: { 200: authResponseSchema, ...errors } },
    },
    async (request) => login(app, request.body, request.headers['user-agent'] ?? null),
  );

  app.post(
    '/token/refresh',
    { config: { public: true }, schema: { tags: ['auth'], response: { 200: refreshResponseSchema, ...errors } } },
    async (request) => refresh(app, bearerToken(request)),
  );

  app.post(
    '/token/destroy',
    {
      onRequest: app.authenticate,
      schema: { tags: ['auth'], security: [{ bearer: [] }], response: { 204: z.null(), 401: errorBodySchema } },
    },
    async (request, reply) => {
      await destroySession(app, request.user.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/token/destroy/all',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['auth'],
        summary: 'Sign out everywhere: ends every session of the signed-in user, this one included',
        security: [{ bearer: [] }],
        response: { 204: z.null(), 401: errorBodySchema },
      },
    },
    async (request, reply) => {
      await destroyAllSessions(app, request.user.id);
      return reply.code(204).send(null);
    },
  );
}
