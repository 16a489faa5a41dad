import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applicationIdParamsSchema, createLockSchema, errorBodySchema, lockIdParamsSchema, lockSchema, updateLockSchema } from '@latchkey/contract';
import { forgetDevice } from '../devices/device-binding.service.js';
import { createLock, deleteLock, getLock, listLocks, updateLock } from './locks.service.js';

const tags = ['locks'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const base = '/platform/application/:applicationId/lock';
const one = `${base}/:lockId`;

/** The owner's side of the sandbox locks: list, add, read, rename and set up, remove. Strangers get 404. */
export async function locksRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };

  app.get(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, response: { 200: z.array(lockSchema), 401: E, 404: E } } },
    async (request) => listLocks(app.db, request.params.applicationId),
  );

  app.post(
    base,
    { ...owner, schema: { tags, security, params: applicationIdParamsSchema, body: createLockSchema, response: { 201: lockSchema, 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      const { applicationId } = request.params;
      const lock = await createLock(app.db, applicationId, request.body, request.user);
      const location = `${app.config.publicUrl}${app.config.apiPrefix}/platform/application/${applicationId}/lock/${lock.id}`;
      return reply.code(201).header('location', location).send(lock);
    },
  );

  app.get(
    one,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, response: { 200: lockSchema, 401: E, 404: E } } },
    async (request) => getLock(app.db, request.params.applicationId, request.params.lockId),
  );

  app.put(
    one,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, body: updateLockSchema, response: { 200: lockSchema, 400: E, 401: E, 404: E } } },
    async (request) => updateLock(app.db, request.params.applicationId, request.params.lockId, request.body, request.user),
  );

  app.delete(
    one,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      // Its device is cut off and its retained config cleared, as an unbind does.
      for (const deviceId of await deleteLock(app.db, request.params.applicationId, request.params.lockId, request.user)) forgetDevice(app, deviceId);
      return reply.code(204).send(null);
    },
  );
}
