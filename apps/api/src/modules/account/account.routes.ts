import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accountSchema, changePasswordSchema, directoryQuerySchema, errorBodySchema, updateAccountSchema } from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { createInvitation } from '../auth/invitations.service.js';
import { applicationUserAccount, changePassword, getAccount, updateAccount } from './account.service.js';

const secured = { tags: ['account'], security: [{ bearer: [] }] };
const noContent = { 204: z.null(), 400: errorBodySchema, 401: errorBodySchema };

/** GET/POST /account, POST /account/password, POST /account/invite. */
export async function accountRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  // GET /account also answers an application user (their token is a full user token there); every
  // other account route changes a portal account and takes portal tokens only.
  const portal = { onRequest: app.authenticate };

  app.get('/account', { onRequest: app.authenticateLockUser, schema: { ...secured, response: { 200: accountSchema, 401: errorBodySchema } } }, async (request) =>
    request.lockUser.kind === 'portal' ? getAccount(app, request.user) : applicationUserAccount(request.lockUser),
  );

  app.post('/account', { ...portal, schema: { ...secured, body: updateAccountSchema, response: noContent } }, async (request, reply) => {
    await updateAccount(app, request.user, request.body.displayName);
    return reply.code(204).send(null);
  });

  app.post('/account/password', { ...portal, schema: { ...secured, body: changePasswordSchema, response: noContent } }, async (request, reply) => {
    await changePassword(app, request.user, request.body);
    return reply.code(204).send(null);
  });

  app.post(
    '/account/invite',
    {
      ...portal,
      // An invitation is an email the platform sends: an unverified account sends only a few a day, and
      // any account ACCOUNT_INVITATION_LIMIT an hour.
      preHandler: async (request) => app.chargeEmail({ senderId: request.user.id, portalInvitation: true }),
      schema: { ...secured, body: directoryQuerySchema, response: { ...noContent, 409: errorBodySchema, 429: errorBodySchema } },
    },
    async (request, reply) => {
      const [me] = await Promise.all([getAccount(app, request.user)]);
      // Written in the inviter's language (the portal sends it), the best guess at the invitee's.
      const language = pickLanguage(request.headers['accept-language']);
      await createInvitation(app, { email: request.body.email, inviterName: me.displayName ?? me.email, language });
      return reply.code(204).send(null);
    },
  );
}
