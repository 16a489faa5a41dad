import type { FastifyInstance, FastifyReply, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  applicationListSchema,
  applicationSchema,
  createApplicationSchema,
  directoryQuerySchema,
  directoryResultSchema,
  errorBodySchema,
  ownerBodySchema,
  ownerSchema,
  updateApplicationSchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { forgetDevice } from '../devices/device-binding.service.js';
import { authItemsRoutes } from './auth-items.routes.js';
import { createApplication, deleteApplication, getApplicationJson, listApplicationsJson, updateApplication } from './applications.service.js';
import { addOwner, listOwners, queryDirectory, removeOwner } from './owners.service.js';

const tags = ['applications'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const base = '/platform/application';
const one = `${base}/:applicationId`;

/** /platform/application/** and /directory/query. Every :applicationId route is owner-only (404 otherwise). */
export async function applicationsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner], validatorCompiler: withApplicationIdParams };
  const signedIn = { onRequest: [app.authenticate] };

  app.get(base, { ...signedIn, schema: { tags, security, response: { 200: applicationListSchema, 401: E } } }, (request, reply) =>
    sendJson(reply, listApplicationsJson(app.applicationReads, app.accessCache, request.user.id)),
  );

  app.post(
    base,
    { ...signedIn, schema: { tags, security, body: createApplicationSchema, response: { 201: z.null(), 400: E, 401: E } } },
    async (request, reply) => {
      // The sandbox lock is named in the creator's language (the portal sends it).
      const id = await createApplication(app, request.user, request.body, pickLanguage(request.headers['accept-language']));
      return reply.code(201).header('location', `${app.config.publicUrl}${app.config.apiPrefix}${base}/${id}`).send(null);
    },
  );

  app.get(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: applicationSchema, 401: E, 404: E } } },
    (request, reply) => sendJson(reply, getApplicationJson(app.applicationReads, request.params.applicationId, request.applicationVersion)),
  );

  app.post(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: updateApplicationSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      await updateApplication(app, request.params.applicationId, request.body, request.user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    one,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      // The devices of its locks are cut off and their retained configs cleared, as an unbind does.
      for (const deviceId of await deleteApplication(app.db, request.params.applicationId)) forgetDevice(app, deviceId);
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
      await addOwner(app.db, request.params.applicationId, request.body.userId, request.user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    `${one}/owner`,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: ownerBodySchema, response: { 204: z.null(), 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      await removeOwner(app.db, request.params.applicationId, request.body.userId, request.user);
      return reply.code(204).send(null);
    },
  );

  // The original portal's form `/platform/application//directory/query` reaches the same route: duplicate slashes are
  // folded. `/directory/query` itself takes lock users' tokens too: modules/devices-sdk.
  for (const path of [`${base}/directory/query`]) {
    app.post(
      path,
      {
        ...signedIn,
        // It answers whether an account exists for an email: per user, so accounts cannot be enumerated in bulk.
        preHandler: app.limitDirectoryLookups,
        schema: { tags: ['directory'], security, body: directoryQuerySchema, response: { 200: directoryResultSchema, 400: E, 401: E, 404: E, 429: E } },
      },
      async (request) => queryDirectory(app.db, request.body.email),
    );
  }

  await app.register(authItemsRoutes);
}

const applicationIdPattern = applicationIdParamsSchema.shape.applicationId.def.pattern;

/**
 * The contract's validator, but for applicationIdParamsSchema an id is first tested against the pattern of
 * the schema's own uuid check, and a match is answered as zod answers it (an object of that one member);
 * anything else goes through zod, so a refusal is zod's. Zod's parse of that one member was 2–3 % of the
 * CPU of a cached read.
 */
const withApplicationIdParams: FastifySchemaCompiler<unknown> = (route) => {
  const validate = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
  if (route.schema !== applicationIdParamsSchema || !applicationIdPattern) return validate;
  return (data) => {
    const id = (data as { applicationId?: unknown } | null)?.applicationId;
    return typeof id === 'string' && applicationIdPattern.test(id) ? { value: { applicationId: id } } : validate(data);
  };
};

/**
 * Sends a body already encoded with the route's response schema (Fastify sends a JSON string as it is).
 * A body at hand (from this instance's caches) goes out in the handler's own tick, with no promise in
 * between, which serves 4–7 % more cached reads a second (docs/performance.md).
 */
function sendJson(reply: FastifyReply, body: string | Promise<string>): Promise<void> | undefined {
  reply.type('application/json; charset=utf-8');
  if (typeof body === 'string') {
    reply.send(body);
    return undefined;
  }
  // Settles once the answer has gone out (a reply is thenable), so Fastify has nothing left to send.
  return body.then(async (json) => await reply.send(json));
}
