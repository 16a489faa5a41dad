import { eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as z from 'zod/mini';
import {
  activityExportDescription,
  activityExportQuerySchema,
  apiErrors,
  applicationIdParamsSchema,
  errorBodySchema,
  lockIdParamsSchema,
  type ActivityExportQuery,
} from '@latchkey/contract';
import { applications } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { getLockRow } from '../locks/locks.service.js';
import { activityCsvStream, exportFileName, type ExportScope } from './activity-export.service.js';

const tags = ['locks'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const csv = { description: activityExportDescription, content: { 'text/csv': { schema: z.string() } } };
const response = { 200: csv, 400: E, 401: E, 404: E };

/**
 * The activity log as CSV for the application's owners, streamed: one lock's, or every lock's of the
 * application. The same rules as the lock log: a stranger or another application's lock gets 404.
 */
export async function activityExportRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  // A HEAD gets the headers alone: handed a stream, Fastify would read it to the end and discard it.
  const send = (request: FastifyRequest, reply: FastifyReply, scope: ExportScope, fileName: string) =>
    reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${fileName}"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(request.method === 'HEAD' ? undefined : activityCsvStream(app.db, scope, request.query as ActivityExportQuery));

  app.get(
    '/platform/application/:applicationId/lock/:lockId/log.csv',
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, querystring: activityExportQuerySchema, response } },
    async (request, reply) => {
      const { applicationId, lockId } = request.params;
      const lock = await getLockRow(app.db, applicationId, lockId);
      return send(request, reply, { lockId }, exportFileName(lock.name, 'lock', request.query));
    },
  );

  app.get(
    '/platform/application/:applicationId/log.csv',
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, querystring: activityExportQuerySchema, response } },
    async (request, reply) => {
      const { applicationId } = request.params;
      const [application] = await app.db.select({ name: applications.name }).from(applications).where(eq(applications.id, applicationId)).limit(1);
      if (!application) throw notFound(apiErrors.applicationNotFound);
      return send(request, reply, { applicationId }, exportFileName(application.name, 'application', request.query));
    },
  );
}
