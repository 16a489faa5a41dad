import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applicationIdParamsSchema, errorBodySchema, historyActorSchema, historyPageSchema, historyQuerySchema } from '@latchkey/contract';
import { listActors, listHistory } from './history.service.js';

const E = errorBodySchema;

/** An application's change history, newest first; owners only (anyone else 404). */
export async function historyRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/platform/application/:applicationId/history',
    {
      onRequest: [app.authenticate, app.requireOwner],
      schema: { tags: ['history'], security: [{ bearer: [] }], params: applicationIdParamsSchema, querystring: historyQuerySchema, response: { 200: historyPageSchema, 400: E, 401: E, 404: E } },
    },
    async (request) => listHistory(app.db, request.params.applicationId, request.query),
  );
  app.get(
    '/platform/application/:applicationId/history/actors',
    {
      onRequest: [app.authenticate, app.requireOwner],
      schema: { tags: ['history'], security: [{ bearer: [] }], params: applicationIdParamsSchema, response: { 200: z.array(historyActorSchema), 401: E, 404: E } },
    },
    async (request) => listActors(app.db, request.params.applicationId),
  );
}
