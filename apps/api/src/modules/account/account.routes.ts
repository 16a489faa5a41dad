import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accountSchema, changePasswordSchema, directoryQuerySchema, errorBodySchema, updateAccountSchema } from '@latchkey/contract';
import { createInvitation } from '../auth/invitations.service.js';
import { changePassword, getAccount, updateAccount } from './account.service.js';

const secured = { tags: ['account'], security: [{ bearer: [] }] };
const noContent = { 204: z.null(), 400: errorBodySchema, 401: errorBodySchema };

/** GET/POST /account, POST /account/password, POST /account/invite. */
export async function accountRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', app.authenticate);

  app.get('/account', { schema: { ...secured, response: { 200: accountSchema, 401: errorBodySchema } } }, async (request) =>
    getAccount(app, request.user),
  );

  app.post('/account', { schema: { ...secured, body: updateAccountSchema, response: noContent } }, async (request, reply) => {
    await updateAccount(app, request.user, request.body.displayName);
    return reply.code(204).send(null);
  });

  app.post('/account/password', { schema: { ...secured, body: changePasswordSchema, response: noContent } }, async (request, reply) => {
    await changePassword(app, request.user, request.body);
    return reply.code(204).send(null);
  });

  app.post(
    '/account/invite',
    { schema: { ...secured, body: directoryQuerySchema, response: { ...noContent, 409: errorBodySchema } } },
    async (request, reply) => {
      const [me] = await Promise.all([getAccount(app, request.user)]);
      await createInvitation(app, { email: request.body.email, inviterName: me.displayName ?? me.email });
      return reply.code(204).send(null);
    },
  );
}
