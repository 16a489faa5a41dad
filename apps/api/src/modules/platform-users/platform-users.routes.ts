import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  addApplicationUserSchema,
  applicationIdParamsSchema,
  applicationUserListQuerySchema,
  applicationUserListSchema,
  applicationUserSchema,
  errorBodySchema,
  platformIdentitySchema,
  platformUserErrors,
  removeApplicationUserSchema,
  tokenCheckReportSchema,
  tokenCheckRequestSchema,
} from '@latchkey/contract';
import { unauthorized } from '../../errors.js';
import { verifyApplicationToken } from '../../lib/third-party-tokens.js';
import { bearerToken } from '../../plugins/auth.js';
import { addUser, listUsers, removeUser, upsertFromToken } from './platform-users.service.js';

const tags = ['platform users'];
const bearer = [{ bearer: [] }];
const USERS = '/platform/application/:applicationId/user';

/** Application-signed user tokens (GET /platform/auth), the owner's token tester and the user list. */
export async function platformUsersRoutes(app: FastifyInstance) {
  tokenRoutes(app);
  userListRoutes(app);
}

/** GET /platform/auth, where an application-signed token is checked, and the owner's token tester. */
function tokenRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  // `public`: no portal token here. The bearer is a token an application's backend signed, checked by
  // verifyApplicationToken alone; the portal's authenticate never accepts such tokens, nor this one them.
  app.get(
    '/platform/auth',
    {
      config: { public: true },
      schema: { tags, security: bearer, response: { 200: platformIdentitySchema, 401: errorBodySchema } },
    },
    async (request) => {
      const token = bearerToken(request);
      if (!token) throw unauthorized(platformUserErrors.tokenMissing);
      const { report, identity } = await verifyApplicationToken(app.db, token, { ...app.config.platformTokens, issuers: app.issuers, log: request.log });
      if (!identity) throw unauthorized(report.error ?? undefined);
      const user = await upsertFromToken(app.db, identity);
      return { applicationId: identity.applicationId, sub: identity.sub, email: user.email, displayName: user.displayName };
    },
  );

  app.post(
    '/platform/application/:applicationId/auth/token-check',
    {
      ...owner,
      schema: {
        tags,
        security: bearer,
        params: applicationIdParamsSchema,
        body: tokenCheckRequestSchema,
        response: { 200: tokenCheckReportSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) =>
      (
        await verifyApplicationToken(app.db, request.body.token, {
          ...app.config.platformTokens,
          issuers: app.issuers,
          applicationId: request.params.applicationId,
          log: request.log,
        })
      ).report,
  );
}

/** The owner's list of an application's users: read, add, remove. */
function userListRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  app.get(
    USERS,
    {
      ...owner,
      schema: {
        tags,
        security: bearer,
        params: applicationIdParamsSchema,
        querystring: applicationUserListQuerySchema,
        response: { 200: applicationUserListSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => listUsers(app.db, request.params.applicationId, request.query),
  );

  app.post(
    USERS,
    {
      ...owner,
      schema: {
        tags,
        security: bearer,
        params: applicationIdParamsSchema,
        body: addApplicationUserSchema,
        response: { 201: applicationUserSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request, reply) => reply.code(201).send(await addUser(app.db, request.params.applicationId, request.body.email, request.user)),
  );

  app.delete(
    USERS,
    {
      ...owner,
      schema: {
        tags,
        security: bearer,
        params: applicationIdParamsSchema,
        body: removeApplicationUserSchema,
        response: { 204: z.null().describe('Removed'), 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      await removeUser(app.db, request.params.applicationId, request.body.userId, request.user);
      return reply.code(204).send(null);
    },
  );
}
