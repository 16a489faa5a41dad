import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  applicationSchema,
  createApplicationSchema,
  directoryQuerySchema,
  directoryResultSchema,
  errorBodySchema,
  ownerBodySchema,
  ownerSchema,
  updateApplicationSchema,
} from '@latchkey/contract';
import { ApplicationBodyCache } from './application-cache.js';
import { authItemsRoutes } from './auth-items.routes.js';
import { createApplication, deleteApplication, getApplication, listApplications, updateApplication } from './applications.service.js';
import { addOwner, listOwners, queryDirectory, removeOwner } from './owners.service.js';

const tags = ['applications'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const base = '/platform/application';
const one = `${base}/:applicationId`;

/** /platform/application/** and /directory/query. Every :applicationId route is owner-only (404 otherwise). */
export async function applicationsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  const signedIn = { onRequest: [app.authenticate] };

  app.get(base, { ...signedIn, schema: { tags, security, response: { 200: z.array(applicationSchema), 401: E } } }, async (request) =>
    listApplications(app.db, request.user.id),
  );

  app.post(
    base,
    { ...signedIn, schema: { tags, security, body: createApplicationSchema, response: { 201: z.null(), 400: E, 401: E } } },
    async (request, reply) => {
      const id = await createApplication(app, request.user.id, request.body);
      return reply.code(201).header('location', `${app.config.publicUrl}${app.config.apiPrefix}${base}/${id}`).send(null);
    },
  );

  // The hottest read of the portal: served from the per-instance body cache while the version the auth
  // statement just read is the cached one (one statement per read instead of two, no re-serialization).
  const bodies = new ApplicationBodyCache();
  app.get(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: applicationSchema, 401: E, 404: E } } },
    async (request, reply) => {
      const id = request.params.applicationId;
      const version = request.applicationVersion;
      const cached = version === null ? undefined : bodies.get(id, version);
      if (cached !== undefined) return sendSerialized(reply, cached);
      const application = await getApplication(app.db, id);
      // Encoded exactly as the route's response serializer would, so cached and uncached bodies match.
      const body = JSON.stringify(z.encode(applicationSchema, application));
      if (version !== null) bodies.set(id, version, body);
      return sendSerialized(reply, body);
    },
  );

  app.post(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: updateApplicationSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      await updateApplication(app, request.params.applicationId, request.body);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      await deleteApplication(app.db, request.params.applicationId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    `${one}/owner`,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: z.array(ownerSchema), 401: E, 404: E } } },
    async (request) => listOwners(app.db, request.params.applicationId),
  );

  app.post(
    `${one}/owner`,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: ownerBodySchema, response: { 204: z.null(), 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      await addOwner(app.db, request.params.applicationId, request.body.userId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    `${one}/owner`,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: ownerBodySchema, response: { 204: z.null(), 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      await removeOwner(app.db, request.params.applicationId, request.body.userId);
      return reply.code(204).send(null);
    },
  );

  // The spec's form `/platform/application//directory/query` reaches the same route: duplicate slashes are folded.
  for (const path of ['/directory/query', `${base}/directory/query`]) {
    app.post(
      path,
      { ...signedIn, schema: { tags: ['directory'], security, body: directoryQuerySchema, response: { 200: directoryResultSchema, 400: E, 401: E, 404: E } } },
      async (request) => queryDirectory(app.db, request.body.email),
    );
  }

  await app.register(authItemsRoutes);
}

/** A body already encoded by the route's schema: Fastify sends a JSON string as it is. */
function sendSerialized(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json);
}
