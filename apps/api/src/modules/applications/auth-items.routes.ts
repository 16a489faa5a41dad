import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  addIssuerBodySchema,
  applicationIdParamsSchema,
  corsBodySchema,
  errorBodySchema,
  issuerBodySchema,
  publicJwkSchema,
  removeKeySchema,
} from '@latchkey/contract';
import { addCorsDomain, addIssuer, addKey, removeCorsDomain, removeIssuer, removeKey } from './auth-items.service.js';

const E = errorBodySchema;
const done = { 204: z.null(), 400: E, 401: E, 404: E, 409: E, 422: E };
const one = '/platform/application/:applicationId';

/** Auth keys (public JWKs), auth domains (issuers) and CORS domains of an application; owner-only. */
export async function authItemsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const route = (tag: string, body: z.core.$ZodType) => ({
    onRequest: [app.authenticate, app.requireOwner],
    schema: { tags: [tag], security: [{ bearer: [] }], params: applicationIdParamsSchema, body, response: done },
  });

  app.post(`${one}/auth/key`, route('auth keys', publicJwkSchema), async (request, reply) => {
    await addKey(app.db, request.params.applicationId, request.body as z.infer<typeof publicJwkSchema>, request.user);
    return reply.code(204).send(null);
  });
  app.delete(`${one}/auth/key`, route('auth keys', removeKeySchema), async (request, reply) => {
    await removeKey(app.db, request.params.applicationId, (request.body as z.infer<typeof removeKeySchema>).kid, request.user);
    return reply.code(204).send(null);
  });

  // With `discovery`, the issuer's OpenID configuration and key set are loaded and checked first; a refusal stores nothing.
  app.post(`${one}/auth/issuer`, route('auth domains', addIssuerBodySchema), async (request, reply) => {
    const body = request.body as z.infer<typeof addIssuerBodySchema>;
    await addIssuer(app.db, app.issuers, request.params.applicationId, body.url, request.user, { discovery: body.discovery === true });
    return reply.code(204).send(null);
  });
  app.delete(`${one}/auth/issuer`, route('auth domains', issuerBodySchema), async (request, reply) => {
    await removeIssuer(app.db, app.issuers, request.params.applicationId, (request.body as z.infer<typeof issuerBodySchema>).url, request.user);
    return reply.code(204).send(null);
  });

  app.post(`${one}/cors`, route('cors domains', corsBodySchema), async (request, reply) => {
    await addCorsDomain(app.db, request.params.applicationId, (request.body as z.infer<typeof corsBodySchema>).url, request.user);
    return reply.code(204).send(null);
  });
  app.delete(`${one}/cors`, route('cors domains', corsBodySchema), async (request, reply) => {
    await removeCorsDomain(app.db, request.params.applicationId, (request.body as z.infer<typeof corsBodySchema>).url, request.user);
    return reply.code(204).send(null);
  });
}
