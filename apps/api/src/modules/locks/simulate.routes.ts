import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { deviceErrors, errorBodySchema, simulateBodySchema, simulateParamsSchema, type SimulatedEvent } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { lockDevices, locks } from '../../db/schema.js';
import { badRequest, conflict } from '../../errors.js';
import { publishEvent } from '../../lib/webhook-outbox.js';
import { getLockRow, VIRTUAL_OFFLINE, type LockRow } from './locks.service.js';

const E = errorBodySchema;

/**
 * POST /platform/application/{id}/lock/{lockId}/simulate/{kind}: a sandbox (virtual) lock reports what a
 * door would — its door sensor, a battery level, a jam, tampering — through its own controller, so the
 * event is logged, shown live and announced to webhooks exactly as a device's is. `offline` / `online`
 * change its presence as a device's would: device.offline / device.online, the lock shown not connected,
 * and its operations answered 503 "The lock is offline" meanwhile. A lock bound to a device is the device's
 * to report: 409. The owner's only; anyone else 404.
 */
export async function simulateRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/platform/application/:applicationId/lock/:lockId/simulate/:kind',
    {
      onRequest: [app.authenticate, app.requireOwner],
      schema: {
        tags: ['locks'],
        security: [{ bearer: [] }],
        summary: 'Makes a sandbox lock report a door event, a battery level, an alarm, or go offline and online again',
        params: simulateParamsSchema,
        body: simulateBodySchema,
        response: { 204: z.null().describe('Reported'), 400: E, 401: E, 404: E, 409: E },
      },
    },
    async (request, reply) => {
      const { applicationId, lockId, kind } = request.params;
      const value = request.body?.value;
      if (kind === 'battery' && value === undefined) throw badRequest(deviceErrors.batteryRange);
      const lock = await getLockRow(app.db, applicationId, lockId);
      const [device] = await app.db
        .select({ id: lockDevices.id })
        .from(lockDevices)
        .where(and(eq(lockDevices.lockId, lock.id), isNotNull(lockDevices.provisionedAt)))
        .limit(1);
      if (device) throw conflict(deviceErrors.simulateDeviceBacked);
      if (kind === 'offline' || kind === 'online') await setPresence(app.db, lock, kind === 'online');
      else await app.virtualDevices.report(lock.id, lock.applicationId, sensorOf(kind, value));
      return reply.code(204).send(null);
    },
  );
}

function sensorOf(kind: Exclude<SimulatedEvent, 'offline' | 'online'>, value: number | undefined) {
  return kind === 'battery' ? { type: 'battery' as const, value: value! } : { type: kind };
}

/** A virtual lock's presence: its mark changed (and announced) only when it differs, in one transaction. */
async function setPresence(db: Db, lock: LockRow, online: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const changed = await tx
      .update(locks)
      .set({
        alarms: online
          ? sql`${locks.alarms} - ${VIRTUAL_OFFLINE}`
          : sql`${locks.alarms} || ${JSON.stringify([VIRTUAL_OFFLINE])}::jsonb`,
      })
      .where(and(eq(locks.id, lock.id), online ? sql`${locks.alarms} ? ${VIRTUAL_OFFLINE}` : sql`not (${locks.alarms} ? ${VIRTUAL_OFFLINE})`))
      .returning({ id: locks.id });
    if (changed.length === 0) return;
    await publishEvent(tx as unknown as Db, lock.applicationId, online ? 'device.online' : 'device.offline', {
      applicationId: lock.applicationId,
      lockId: lock.id,
      lockName: lock.name,
      deviceId: null,
    });
  });
}
