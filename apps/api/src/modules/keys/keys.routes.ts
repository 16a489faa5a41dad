import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { jwksSchema, type Jwks } from '@latchkey/contract';

/** Mounted at the root, beside the API: /.well-known is where verifiers look for it. */
export async function jwksRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/.well-known/jwks.json',
    { config: { public: true }, schema: { tags: ['auth'], response: { 200: jwksSchema } } },
    // A minute of caching: a rotated key is published at once, and the previous one stays listed for far longer.
    async (_request, reply) => reply.header('cache-control', 'public, max-age=60').send({ keys: app.tokens.keys.jwks() as Jwks['keys'] }),
  );
}
