import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { deviceErrors, deviceTopic, type DeviceOperationMessage, type DeviceResult } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { lockActivity } from '../../../db/schema.js';
import { publishEventStatement } from '../../../lib/webhook-outbox.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import type { ActivityActor } from '../../activity/activity.service.js';
import {
  OperationRefusal,
  applyOperation,
  logTypeOf,
  spendOperationId,
  type DeviceLockAccess,
  type DeviceRelay,
  type VerifiedOperation,
} from '../../operations/operations.service.js';
import { resultStateChange } from './device-status.js';

/** What the lock's log says of an operation its device decided. */
export const deviceLogReasons = {
  done: 'Done by the lock’s device',
  refused: (reason: string) => `Refused by the lock’s device: ${reason}`,
  /** The device refused without saying why. */
  noReason: 'The lock refused the operation',
} as const;

interface Waiting {
  deviceId: string;
  resolve: (result: DeviceResult | null) => void;
  timer: NodeJS.Timeout;
}

/**
 * A device-backed lock's operations: checked by the platform as any other (operations.service.ts), then
 * handed to the device exactly as the user signed them, `{requestId, jws}` on `…/op`, and the device's
 * answer carried out. Its id is spent before it is sent, so a replay is refused here and never reaches
 * the lock. Waiting for the answer holds no database connection. One log entry per outcome, saying the
 * device decided: DONE → what the platform applies for it (the lock's state follows the device);
 * REFUSED → 403 with the device's reason; offline → 503 without sending; no answer in time → 504.
 */
export class DeviceOperationRelay implements DeviceRelay {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly db: Db,
    private readonly bus: DeviceBus,
    private readonly timeoutMs: number,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
  ) {}

  async relay(access: DeviceLockAccess, verified: VerifiedOperation, jws: string, actor: ActivityActor): Promise<void> {
    const type = logTypeOf(verified.operation);
    const deviceId = access.device.id;
    const unavailable = (status: 503 | 504, message: string) => new OperationRefusal(status, message, type, { charged: false });
    if (!access.device.connected) throw unavailable(503, deviceErrors.offline);
    await spendOperationId(this.db, verified);
    const requestId = randomUUID();
    const answer = this.awaitResult(requestId, deviceId);
    const message: DeviceOperationMessage = { requestId, jws };
    try {
      await this.bus.publish(deviceTopic(deviceId, 'op'), JSON.stringify(message));
    } catch (err) {
      this.settle(requestId, null);
      this.log.warn({ err, deviceId }, 'operation not handed to the broker');
      throw unavailable(503, deviceErrors.offline);
    }
    const result = await answer;
    if (!result) throw unavailable(504, deviceErrors.noAnswer);
    if (result.outcome === 'REFUSED') {
      const reason = result.reason?.trim() || deviceLogReasons.noReason;
      throw new OperationRefusal(403, reason, type, { logReason: deviceLogReasons.refused(reason) });
    }
    await this.carryOut(access, verified, actor, result);
  }

  /**
   * A result from a device. Only the device the request went to can answer it; a result for a request
   * this instance is not waiting for (never sent, already timed out, or another instance's) is ignored.
   */
  onResult(deviceId: string, result: DeviceResult): void {
    const waiting = this.waiting.get(result.requestId);
    if (!waiting) return void this.log.info({ deviceId, requestId: result.requestId }, 'device result for no waiting request: ignored');
    if (waiting.deviceId !== deviceId) return void this.log.warn({ deviceId, requestId: result.requestId }, 'device result from another device than asked: ignored');
    this.settle(result.requestId, result);
  }

  /** Ends every wait as unanswered (the service is closing). */
  stop(): void {
    for (const requestId of [...this.waiting.keys()]) this.settle(requestId, null);
  }

  /** Requests waiting for their device on this instance. */
  get inFlight(): number {
    return this.waiting.size;
  }

  private awaitResult(requestId: string, deviceId: string): Promise<DeviceResult | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(requestId, null), this.timeoutMs);
      this.waiting.set(requestId, { deviceId, resolve, timer });
    });
  }

  private settle(requestId: string, result: DeviceResult | null): void {
    const waiting = this.waiting.get(requestId);
    if (!waiting) return;
    this.waiting.delete(requestId);
    clearTimeout(waiting.timer);
    waiting.resolve(result);
  }

  /**
   * The device did it: what the platform applies for the operation, logged as the device's doing. A lock
   * or unlock is one statement — its log entry, its webhook deliveries and the device's new state commit
   * together, in one round trip.
   */
  private async carryOut(access: DeviceLockAccess, verified: VerifiedOperation, actor: ActivityActor, result: DeviceResult): Promise<void> {
    const { operation } = verified;
    const { lock, device } = access;
    if (operation.type !== 'MUTATE_LOCK') return applyOperation(this.db, access, verified, actor, { spent: true, reason: deviceLogReasons.done });
    const seconds = operation.duration ?? lock.unlockTime;
    const parts = [
      sql`entry as (
        insert into ${lockActivity} (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, subject, reason)
        values (${lock.id}, ${lock.applicationId}, ${logTypeOf(operation)}, ${actor.userId ?? null}, ${actor.email ?? null}, ${actor.displayName ?? null},
          ${operation.locked ? null : `${seconds} s`}, ${deviceLogReasons.done}))`,
    ];
    if (!operation.locked) {
      const announced = publishEventStatement(lock.applicationId, 'lock.unlocked', {
        applicationId: lock.applicationId,
        lockId: lock.id,
        lockName: lock.name,
        userId: actor.userId,
        email: actor.email,
        duration: seconds,
      });
      parts.push(sql`announced as (${announced})`);
    }
    const state = result.state ? resultStateChange(device.id, lock.applicationId, lock.id, result.state.locked) : null;
    if (state) parts.push(sql`moved as (${state.update})`);
    await this.db.execute(sql`with ${sql.join(parts, sql`, `)} ${state ? state.notify : sql`select 1`}`);
  }
}
