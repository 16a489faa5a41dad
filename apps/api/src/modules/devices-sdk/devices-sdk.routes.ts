import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  batchUserPublicKeySchema,
  deviceLockParamsSchema,
  directoryLookupSchema,
  errorBodySchema,
  sdkAuditEntrySchema,
  sdkAuditQuerySchema,
  sdkLockSchema,
  sdkLockUserSchema,
  sdkUserLocksSchema,
  sdkUserParamsSchema,
  shareableLockSchema,
  shareInviteParamsSchema,
  shareInviteQuerySchema,
  updateLockPropertiesSchema,
  userPublicKeySchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { refuseEndedTileSignIn } from '../shares/shares.service.js';
import { inviteByEmail, lookupDirectory, lookupSize } from './directory.service.js';
import { getUserLocks, listFavourites, listLockUsers, listShareable, updateLockProperties, userAudit } from './lock-properties.service.js';

const tags = ['lock users'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const errors = { 400: E, 401: E, 403: E, 404: E };

/**
 * People and lock properties: the lock users' calls of the platform's SDKs that operations.routes.ts
 * does not serve (docs/sdk-parity.md). GET /device/{lockId} in the v3 shape and the v2 audit list are
 * answered there, by the Accept header, with this module's service.
 */
export async function devicesSdkRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const lockUser = { onRequest: app.authenticateLockUser };
  // Directory look-ups answer whether someone exists: DIRECTORY_RATE_LIMIT_MAX per user and window, like
  // the portal's, each name of a batch counted.
  const directory = app.createRateLimit({ keyGenerator: (request) => `dir:${request.lockUser.id}`, max: app.config.rateLimit.directoryMax });
  const chargeLookups = async (request: FastifyRequest, names: number) => {
    for (let i = 0; i < names; i++) refuseIfExceeded(await directory(request));
  };

  app.put(
    '/device/:lockId',
    {
      ...lockUser,
      schema: { tags, security, params: deviceLockParamsSchema, body: updateLockPropertiesSchema, response: { 204: z.null().describe('Done'), ...errors } },
    },
    async (request, reply) => {
      await updateLockProperties(app.db, request.lockUser, request.params.lockId, request.body);
      return reply.code(204).send(null);
    },
  );

  app.get('/device/favourite', { ...lockUser, schema: { tags, security, response: { 200: z.array(sdkLockSchema), 401: E } } }, async (request) =>
    listFavourites(app.db, request.lockUser),
  );

  app.get('/device/shareable', { ...lockUser, schema: { tags, security, response: { 200: z.array(shareableLockSchema), 401: E } } }, async (request) =>
    listShareable(app.db, request.lockUser),
  );

  app.get(
    '/device/:lockId/users',
    { ...lockUser, schema: { tags, security, params: deviceLockParamsSchema, response: { 200: z.array(sdkLockUserSchema), ...errors } } },
    async (request) => listLockUsers(app.db, request.lockUser, request.params.lockId),
  );

  app.get(
    '/user/:userId',
    { ...lockUser, schema: { tags, security, params: sdkUserParamsSchema, response: { 200: sdkUserLocksSchema, ...errors } } },
    async (request) => getUserLocks(app.db, request.lockUser, request.params.userId),
  );

  app.get(
    '/user/:userId/log',
    { ...lockUser, schema: { tags, security, params: sdkUserParamsSchema, querystring: sdkAuditQuerySchema, response: { 200: z.array(sdkAuditEntrySchema), ...errors } } },
    async (request) => userAudit(app.db, request.lockUser, request.params.userId, request.query),
  );

  app.post(
    '/directory/query',
    {
      ...lockUser,
      preHandler: async (request) => {
        await chargeLookups(request, lookupSize(request.body));
        await refuseEndedTileSignIn(app.db, request.lockUser);
      },
      schema: {
        tags: ['directory'],
        security,
        body: directoryLookupSchema,
        response: { 200: z.union([userPublicKeySchema, z.array(batchUserPublicKeySchema)]), 400: E, 401: E, 404: E, 429: E },
      },
    },
    async (request) => lookupDirectory(app.db, request.lockUser, request.body),
  );

  // The SDKs send this POST without a body, the headless one with Content-Type: application/json: its own
  // scope reads no body at all.
  await app.register(async (scope) => {
    const inner = scope.withTypeProvider<ZodTypeProvider>();
    inner.removeAllContentTypeParsers();
    inner.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 }, (_request, _body, done) => done(null, undefined));
    inner.post(
      '/share/invite/:email',
      {
        ...lockUser,
        preHandler: async (request) => {
          await chargeLookups(request, 1);
          await refuseEndedTileSignIn(app.db, request.lockUser);
        },
        schema: { tags: ['directory'], security, params: shareInviteParamsSchema, querystring: shareInviteQuerySchema, response: { 200: userPublicKeySchema, 400: E, 401: E, 403: E, 404: E, 429: E } },
      },
      async (request) => inviteByEmail(app, request.lockUser, request.params.email, pickLanguage(request.headers['accept-language'])),
    );
  });
}
