import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accountSessionParamsSchema, accountSessionSchema, errorBodySchema } from '@latchkey/contract';
import { deleteAccount, endSession, listSessions } from './account-management.service.js';

const E = errorBodySchema;
const secured = { tags: ['account'], security: [{ bearer: [] }] };

/** GET /account/sessions, DELETE /account/sessions/{sessionId}, DELETE /account: the account page's calls. */
export async function accountManagementRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/account/sessions',
    { onRequest: app.authenticate, schema: { ...secured, summary: 'The sessions you are signed in with', response: { 200: z.array(accountSessionSchema), 401: E } } },
    async (request) => listSessions(app.db, request.user.id, request.user.sessionId),
  );
  app.delete(
    '/account/sessions/:sessionId',
    {
      onRequest: app.authenticate,
      schema: { ...secured, summary: 'Ends one of your sessions', params: accountSessionParamsSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } },
    },
    async (request, reply) => {
      await endSession(app.db, request.user.id, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );
  app.delete(
    '/account',
    {
      onRequest: app.authenticate,
      schema: {
        ...secured,
        summary: 'Deletes your account (refused while you are the last owner of an application)',
        response: { 204: z.null(), 401: E, 409: E },
      },
    },
    async (request, reply) => {
      await deleteAccount(app.db, request.user.id);
      return reply.code(204).send(null);
    },
  );
}
