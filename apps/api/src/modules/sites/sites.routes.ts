import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  deviceLockListSchema,
  errorBodySchema,
  lockIdParamsSchema,
  lockSiteSchema,
  ownerSiteParamsSchema,
  ownerSiteSchema,
  siteNameSchema,
  siteParamsSchema,
  siteSchema,
  siteUserSchema,
} from '@latchkey/contract';
import { createSite, deleteSite, listOwnerSites, listSiteDevices, listSites, listSiteUsers, renameSite, setLockSite } from './sites.service.js';

const security = [{ bearer: [] }];
const E = errorBodySchema;

/**
 * Sites. Lock users: GET /site, /site/{siteId}/device and /site/{siteId}/user as the headless
 * SDK's SitesClient calls them. Owners: list, create, rename, remove, and move a lock between sites.
 */
export async function sitesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const lockUser = { onRequest: app.authenticateLockUser };
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  const tags = ['sites'];

  app.get('/site', { ...lockUser, schema: { tags, security, response: { 200: z.array(siteSchema), 401: E } } }, async (request) =>
    listSites(app.db, request.lockUser),
  );

  app.get(
    '/site/:siteId/device',
    { ...lockUser, schema: { tags, security, params: siteParamsSchema, response: { 200: deviceLockListSchema, 401: E, 404: E } } },
    async (request) => listSiteDevices(app.db, request.lockUser, request.params.siteId),
  );

  app.get(
    '/site/:siteId/user',
    { ...lockUser, schema: { tags, security, params: siteParamsSchema, response: { 200: z.array(siteUserSchema), 401: E, 404: E } } },
    async (request) => listSiteUsers(app.db, request.lockUser, request.params.siteId),
  );

  const base = '/platform/application/:applicationId/site';
  app.get(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: z.array(ownerSiteSchema), 401: E, 404: E } } },
    async (request) => listOwnerSites(app.db, request.params.applicationId),
  );

  app.post(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: siteNameSchema, response: { 201: ownerSiteSchema, 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      const { applicationId } = request.params;
      const site = await createSite(app.db, applicationId, request.body, request.user);
      const location = `${app.config.publicUrl}${app.config.apiPrefix}/platform/application/${applicationId}/site/${site.id}`;
      return reply.code(201).header('location', location).send(site);
    },
  );

  app.put(
    `${base}/:siteId`,
    { ...owner, schema: { tags, security, params: ownerSiteParamsSchema, body: siteNameSchema, response: { 200: ownerSiteSchema, 400: E, 401: E, 404: E, 409: E } } },
    async (request) => renameSite(app.db, request.params.applicationId, request.params.siteId, request.body, request.user),
  );

  app.delete(
    `${base}/:siteId`,
    { ...owner, schema: { tags, security, params: ownerSiteParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      await deleteSite(app.db, request.params.applicationId, request.params.siteId, request.user);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/platform/application/:applicationId/lock/:lockId/site',
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, body: lockSiteSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      await setLockSite(app.db, request.params.applicationId, request.params.lockId, request.body.siteId, request.user);
      return reply.code(204).send(null);
    },
  );
}
