import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createLockShareSchema, errorBodySchema, lockIdParamsSchema, lockShareParamsSchema, lockShareSchema } from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { addShare, listShares, removeShare } from './shares.service.js';

const tags = ['locks'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const users = '/platform/application/:applicationId/lock/:lockId/user';

/** Who a lock is shared with: list, share (by user id or email, inviting new people), revoke. Owners only. */
export async function sharesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  app.get(
    users,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, response: { 200: z.array(lockShareSchema), 401: E, 404: E } } },
    async (request) => listShares(app.db, request.params.applicationId, request.params.lockId),
  );

  // 201 for a new share, 200 when an existing one was changed (or its invitation renewed).
  app.post(
    users,
    {
      ...owner,
      // A share that makes the platform send an email is charged for it first (addShare).
      schema: { tags, security, params: lockIdParamsSchema, body: createLockShareSchema, response: { 200: lockShareSchema, 201: lockShareSchema, 400: E, 401: E, 404: E, 429: E } },
    },
    async (request, reply) => {
      // The email is written in the sharer's language (the portal sends it), the best guess at the recipient's.
      const language = pickLanguage(request.headers['accept-language']);
      const { share, created } = await addShare(app, request.params.applicationId, request.params.lockId, request.body, request.user, language);
      return reply.code(created ? 201 : 200).send(share);
    },
  );

  app.delete(
    `${users}/:userId`,
    { ...owner, schema: { tags, security, params: lockShareParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      const { applicationId, lockId, userId } = request.params;
      await removeShare(app.db, applicationId, lockId, userId, request.user);
      return reply.code(204).send(null);
    },
  );
}
