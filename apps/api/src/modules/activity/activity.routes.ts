import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorBodySchema, lockIdParamsSchema, lockLogPageSchema, lockLogQuerySchema } from '@latchkey/contract';
import { getLockRow } from '../locks/locks.service.js';
import { listActivity } from './activity.service.js';

const tags = ['locks'];
const security = [{ bearer: [] }];
const E = errorBodySchema;

/** A lock's activity log for the application's owners (its admins); anyone else gets 404. */
export async function activityRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  app.get(
    '/platform/application/:applicationId/lock/:lockId/log',
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, querystring: lockLogQuerySchema, response: { 200: lockLogPageSchema, 400: E, 401: E, 404: E } } },
    async (request) => {
      const { applicationId, lockId } = request.params;
      await getLockRow(app.db, applicationId, lockId);
      return listActivity(app.db, lockId, request.query);
    },
  );
}
