import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  accessCodeErrors,
  accessCodeListSchema,
  accessCodeLockParamsSchema,
  accessCodeParamsSchema,
  accessCodeSchema,
  createAccessCodeSchema,
  deviceAccessCodeLockParamsSchema,
  deviceAccessCodeParamsSchema,
  errorBodySchema,
  keypadEntrySchema,
  keypadResultSchema,
  type KeypadResult,
} from '@latchkey/contract';
import { conflict } from '../../errors.js';
import { SecretBox } from '../../lib/secret-box.js';
import { platformActor } from '../activity/activity.service.js';
import {
  adminCodeLock,
  createAccessCode,
  listAccessCodes,
  lockUserActor,
  ownerCodeLock,
  withdrawAccessCode,
  type AccessCodeDeps,
} from './access-codes.service.js';
import { VirtualOfflineSecrets } from './offline-secrets.service.js';

const tags = ['access codes'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const ownerBase = '/platform/application/:applicationId/lock/:lockId/access-code';
const adminBase = '/device/:lockId/access-code';

/**
 * A lock's access codes (PIN codes for its keypad): its owners manage them from the portal, the lock's
 * ADMINs with a user token (a USER of the lock is refused, 403); a stranger's lock is 404. A virtual lock's
 * keypad can be tried out through the same check a device runs.
 */
export async function accessCodesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  const lockUser = { onRequest: app.authenticateLockUser };
  const box = new SecretBox(app.config.secretsEncryptionKey);
  const deps: AccessCodeDeps = { db: app.db, box, virtualSecrets: new VirtualOfflineSecrets(app.db, box) };

  app.get(
    ownerBase,
    { ...owner, schema: { tags, security, summary: 'The lock’s access codes: current ones, and withdrawn offline ones until their end', params: accessCodeLockParamsSchema, response: { 200: accessCodeListSchema, 401: E, 404: E } } },
    async (request) => listAccessCodes(app.db, box, await ownerCodeLock(app.db, request.params.applicationId, request.params.lockId)),
  );

  app.post(
    ownerBase,
    {
      ...owner,
      schema: { tags, security, summary: 'Creates an online or an offline access code', params: accessCodeLockParamsSchema, body: createAccessCodeSchema, response: { 201: accessCodeSchema, 400: E, 401: E, 404: E, 409: E } },
    },
    async (request, reply) => {
      const target = await ownerCodeLock(app.db, request.params.applicationId, request.params.lockId);
      return reply.code(201).send(await createAccessCode(deps, target, request.body, await platformActor(app.db, request.user)));
    },
  );

  app.delete(
    `${ownerBase}/:accessCodeId`,
    { ...owner, schema: { tags, security, summary: 'Withdraws an access code', params: accessCodeParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      const target = await ownerCodeLock(app.db, request.params.applicationId, request.params.lockId);
      await withdrawAccessCode(deps, target, request.params.accessCodeId, await platformActor(app.db, request.user));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/platform/application/:applicationId/lock/:lockId/simulate/keypad',
    {
      ...owner,
      schema: {
        tags,
        security,
        summary: 'Types a code at a virtual lock’s keypad: checked as a device checks it, lockout included',
        params: accessCodeLockParamsSchema,
        body: keypadEntrySchema,
        response: { 200: keypadResultSchema, 400: E, 401: E, 404: E, 409: E },
      },
    },
    async (request): Promise<KeypadResult> => {
      const { lock, device } = await ownerCodeLock(app.db, request.params.applicationId, request.params.lockId);
      if (device) throw conflict(accessCodeErrors.keypadNotVirtual);
      const result = await app.virtualDevices.enterCode(lock.id, lock.applicationId, request.body.code);
      return { outcome: result.outcome, ...(result.reason ? { reason: result.reason } : {}) };
    },
  );

  app.get(
    adminBase,
    { ...lockUser, schema: { tags, security, summary: 'The lock’s access codes, for its ADMINs', params: deviceAccessCodeLockParamsSchema, response: { 200: accessCodeListSchema, 401: E, 403: E, 404: E } } },
    async (request) => listAccessCodes(app.db, box, await adminCodeLock(app.db, request.lockUser, request.params.lockId)),
  );

  app.post(
    adminBase,
    {
      ...lockUser,
      schema: { tags, security, summary: 'Creates an access code, for the lock’s ADMINs', params: deviceAccessCodeLockParamsSchema, body: createAccessCodeSchema, response: { 201: accessCodeSchema, 400: E, 401: E, 403: E, 404: E, 409: E } },
    },
    async (request, reply) => {
      const target = await adminCodeLock(app.db, request.lockUser, request.params.lockId);
      return reply.code(201).send(await createAccessCode(deps, target, request.body, lockUserActor(request.lockUser)));
    },
  );

  app.delete(
    `${adminBase}/:accessCodeId`,
    { ...lockUser, schema: { tags, security, summary: 'Withdraws an access code, for the lock’s ADMINs', params: deviceAccessCodeParamsSchema, response: { 204: z.null(), 401: E, 403: E, 404: E } } },
    async (request, reply) => {
      const target = await adminCodeLock(app.db, request.lockUser, request.params.lockId);
      await withdrawAccessCode(deps, target, request.params.accessCodeId, lockUserActor(request.lockUser));
      return reply.code(204).send(null);
    },
  );
}
