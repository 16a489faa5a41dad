import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  MAX_OPERATION_LENGTH,
  deviceLockListSchema,
  deviceLockParamsSchema,
  deviceLockSchema,
  errorBodySchema,
  lockErrors,
  lockLogPageSchema,
  lockLogQuerySchema,
  operationErrors,
  sdkAuditEntrySchema,
  sdkLockSchema,
} from '@latchkey/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../errors.js';
import { failedOutcome, operationTypeLabel, type OperationRecorder } from '../../lib/operation-outcome.js';
import { listActivity } from '../activity/activity.service.js';
import { acceptedVersion } from '../../lib/accepted-version.js';
import { getSdkLock, lockAudit } from '../devices-sdk/lock-properties.service.js';
import { getDeviceLock, getLockAccess, listDeviceLocks } from './devices.service.js';
import { OperationVerifier } from '../../lib/operation-token.js';
import { createOperationContext, executeOperation } from './operations.service.js';

const tags = ['lock users'];
const security = [{ bearer: [] }];
const errors = { 400: errorBodySchema, 401: errorBodySchema, 403: errorBodySchema, 404: errorBodySchema };

/**
 * The lock user's routes (a portal or an application-signed user token): their locks, an admin's view
 * of a lock's log, and signed operations. The operation body is a compact JWS, sent as application/jwt,
 * or by older clients as application/json (bare, or as a JSON string).
 */
export async function operationsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  // Locks with a device are decided by it: the device runtime relays their operations, when it runs.
  // Locks without one are virtual devices in this process, when they run (modules/devices/virtual).
  const operations = createOperationContext(
    app.db,
    new OperationVerifier(app.platformCa),
    app.hasDecorator('deviceRelay') ? app.deviceRelay : null,
    app.hasDecorator('virtualDevices') ? app.virtualDevices : null,
    app.hasDecorator('metrics') ? app.metrics.recordOperation : null,
  );
  const undecided = countUndecided(operations.recorder);
  const lockUser = { onRequest: app.authenticateLockUser };

  // This plugin's own parsers (Fastify scopes them to it): the body reaches the handler as text.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(['application/jwt', 'application/json'], { parseAs: 'string', bodyLimit: MAX_OPERATION_LENGTH }, (_request, body, done) =>
    done(null, body),
  );

  app.get('/device/mine', { ...lockUser, schema: { tags, security, response: { 200: deviceLockListSchema, 401: errorBodySchema } } }, async (request) =>
    listDeviceLocks(app.db, request.lockUser),
  );

  // With `Accept: application/vnd.doordeck.api-v3+json` (the headless SDK), the SDKs' shape.
  app.get(
    '/device/:lockId',
    { ...lockUser, schema: { tags, security, params: deviceLockParamsSchema, response: { 200: z.union([sdkLockSchema, deviceLockSchema]), 401: errorBodySchema, 404: errorBodySchema } } },
    async (request) =>
      acceptedVersion(request) >= 3 ? getSdkLock(app.db, request.lockUser, request.params.lockId) : getDeviceLock(app.db, request.lockUser, request.params.lockId),
  );

  app.get(
    '/device/:lockId/log',
    // With `Accept: …api-v2+json` or later (the headless SDK): the SDKs' audit list, newest first.
    { ...lockUser, schema: { tags, security, params: deviceLockParamsSchema, querystring: lockLogQuerySchema, response: { 200: z.union([lockLogPageSchema, z.array(sdkAuditEntrySchema)]), ...errors } } },
    async (request) => {
      const access = await getLockAccess(app.db, request.lockUser, request.params.lockId);
      if (!access?.role) throw notFound(lockErrors.lockNotFound);
      if (access.role !== 'ADMIN') throw new AppError(403, operationErrors.notAdmin);
      if (acceptedVersion(request) >= 2) return lockAudit(app.db, access, request.query);
      return listActivity(app.db, access.lock.id, request.query);
    },
  );

  app.post(
    '/device/:lockId/execute',
    {
      ...lockUser,
      ...undecided.hooks,
      // It changes locks, never sessions, applications or owners: no wait for the access cache.
      config: { accessUnchanged: true },
      schema: {
        tags,
        security,
        params: deviceLockParamsSchema,
        body: z.string().max(MAX_OPERATION_LENGTH).describe('A compact JWS (application/jwt)'),
        response: { 204: z.null().describe('Done'), ...errors, 409: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      undecided.reached(request);
      await executeOperation(operations, request.lockUser, request.params.lockId, unwrap(request.body), () => app.chargeRefusedOperation(request), request.ip);
      return reply.code(204).send(null);
    },
  );
}

/**
 * An operation is counted where it is decided (executeOperation); a request refused before it got there
 * (not signed in, an invalid body, the rate limit, an error) is counted here when it is answered, by its status.
 */
function countUndecided(recorder: OperationRecorder | null) {
  const decided = new WeakSet<FastifyRequest>();
  const errors = new WeakMap<FastifyRequest, unknown>();
  return {
    reached: (request: FastifyRequest) => void decided.add(request),
    hooks: {
      onError: (request: FastifyRequest, _reply: FastifyReply, error: unknown, done: () => void) => {
        if (!decided.has(request)) errors.set(request, error);
        done();
      },
      onResponse: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        if (recorder && !decided.has(request)) recorder(failedOutcome(operationTypeLabel(request.body), errors.get(request), reply.statusCode));
        done();
      },
    },
  };
}

/** An old client may send the JWS as a JSON string; the JS SDK sends it bare under application/json. */
function unwrap(body: string): string {
  const text = body.trim();
  if (!text.startsWith('"')) return text;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : text;
  } catch {
    return text;
  }
}
