import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { deviceErrors, deviceLogReasons, deviceTopic, type DeviceOperationMessage, type DeviceResult } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { GroupCommit } from '../../../lib/group-commit.js';
import { publishEventsSql } from '../../../lib/webhook-outbox.js';
import { LOCKS_CHANNEL } from '../../../plugins/live-events.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import type { ActivityActor } from '../../activity/activity.service.js';
import {
  OperationRefusal,
  applyOperation,
  logTypeOf,
  type DeviceLockAccess,
  type DeviceRelay,
  type VerifiedOperation,
} from '../../operations/operations.service.js';

/** A lock or unlock the device did, as its batch writes it. */
interface Outcome {
  lock_id: string;
  application_id: string;
  lock_name: string;
  user_id: string | null;
  email: string | null;
  display_name: string | null;
  seconds: number;
  locked: boolean;
  device_id: string;
  /** What the device's answer says it is now; null: it did not say. */
  state_locked: boolean | null;
  at: string;
}

/** Each unlock a device did, announced to the application's webhooks (lock.unlocked), in the same statement. */
const announceUnlocks = sql.raw(
  publishEventsSql(
    'lock.unlocked',
    `select application_id, jsonb_build_object('applicationId', application_id, 'lockId', lock_id, 'lockName', lock_name,
       'userId', user_id, 'email', email, 'duration', seconds) as data from input where not locked order by n`,
  ),
);

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
  private readonly outcomes = new GroupCommit<Outcome, true>((items) => this.writeOutcomes(items), { missing: true });

  constructor(
    private readonly db: Db,
    private readonly bus: DeviceBus,
    private readonly timeoutMs: number,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
  ) {}

  /** The operation's id is spent already (operations.service.ts, with the device connected). */
  async relay(access: DeviceLockAccess, verified: VerifiedOperation, jws: string, actor: ActivityActor): Promise<void> {
    const type = logTypeOf(verified.operation);
    const deviceId = access.device.id;
    const unavailable = (status: 503 | 504, message: string) => new OperationRefusal(status, message, type, { charged: false });
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
   * or unlock is written with the others that arrive together (lib/group-commit.ts): their log entries,
   * webhook deliveries and the devices' new states in one statement and one commit.
   */
  private async carryOut(access: DeviceLockAccess, verified: VerifiedOperation, actor: ActivityActor, result: DeviceResult): Promise<void> {
    const { operation } = verified;
    const { lock, device } = access;
    if (operation.type !== 'MUTATE_LOCK') return applyOperation(this.db, access, verified, actor, { spent: true, reason: deviceLogReasons.done });
    await this.outcomes.submit({
      lock_id: lock.id,
      application_id: lock.applicationId,
      lock_name: lock.name,
      user_id: actor.userId ?? null,
      email: actor.email ?? null,
      display_name: actor.displayName ?? null,
      seconds: operation.duration ?? lock.unlockTime,
      locked: operation.locked,
      device_id: device.id,
      state_locked: result.state ? result.state.locked : null,
      at: new Date().toISOString(),
    });
  }

  /**
   * A batch of outcomes: each one's log entry, each unlock's webhook deliveries, and each device's last
   * state in the batch. A device row that already says so is neither updated nor locked (a burst of
   * unlocks of one lock does not queue on its row), and only a row that moved tells the lock's live view.
   */
  private async writeOutcomes(items: (Outcome & { n: number })[]): Promise<Map<number, true>> {
    await this.db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as t(
          n int, lock_id uuid, application_id uuid, lock_name text, user_id uuid, email text, display_name text, seconds int, locked boolean,
          device_id uuid, state_locked boolean, at text)
      ), entry as (
        insert into lock_activity (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, subject, reason)
        select lock_id, application_id, case when locked then 'LOCK' else 'UNLOCK' end, user_id, email, display_name,
          case when locked then null else seconds || ' s' end, ${deviceLogReasons.done}
        from input order by n returning id
      ), announced as (
        ${announceUnlocks} returning 1
      ), latest as (
        select distinct on (device_id) device_id, application_id, lock_id, state_locked, at from input
        where state_locked is not null order by device_id, n desc
      ), moved as (
        update lock_devices d set state = coalesce(d.state, '{}'::jsonb) || jsonb_build_object('locked', x.state_locked, 'at', x.at), last_seen = now()
        from latest x where d.id = x.device_id and (d.state -> 'locked') is distinct from to_jsonb(x.state_locked)
        returning x.application_id, x.lock_id
      )
      select pg_notify(${LOCKS_CHANNEL}, application_id || ' ' || lock_id || ' device') from moved`);
    return new Map();
  }
}
