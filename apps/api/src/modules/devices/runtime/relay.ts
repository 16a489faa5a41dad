import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { deviceErrors, deviceLogReasons, deviceTopic, type AccessMethod, type DeviceOperationMessage, type DeviceResult } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { GroupCommit } from '../../../lib/group-commit.js';
import { publishEventsSql } from '../../../lib/webhook-outbox.js';
import { LOCKS_CHANNEL } from '../../../plugins/live-events.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import type { PlatformCa } from '../../../plugins/platform-ca.js';
import type { ActivityActor } from '../../activity/activity.service.js';
import { OperationRefusal, deviceRefusalKind, logTypeOf, type VerifiedOperation } from '../../../lib/operation-outcome.js';
import { OperationVerifier } from '../../../lib/operation-token.js';
import type { DeviceLockAccess, DeviceRelay } from '../../operations/operations.service.js';

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
  /** The log entry's reason (done through the platform, or at the device's local endpoint). */
  reason: string;
  /** When the device decided, for an outcome it reports afterwards; null: now. */
  decided_at: string | null;
  /** What makes a reported outcome's entry once only (used_operation_ids); null for the platform's own. */
  once_key: string | null;
  /** How it came: through the cloud (mobile_key, console, tile) or at the device's local endpoint (local). */
  method: AccessMethod;
}

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** Answers taken here whose message the broker has not yet asked about, at most (DeviceOperationRelay.takenHere). */
const MAX_ANSWERED_REMEMBERED = 10_000;

/** How long a reported local outcome is remembered, so a report sent again (or heard by every instance) is logged once. */
const LOCAL_OUTCOME_MEMORY_MS = 30 * 86_400_000;

/** Each unlock a device did, announced to the application's webhooks (lock.unlocked), in the same statement. */
const announceUnlocks = sql.raw(
  publishEventsSql(
    'lock.unlocked',
    `select application_id, jsonb_build_object('applicationId', application_id, 'lockId', lock_id, 'lockName', lock_name,
       'userId', user_id, 'email', email, 'duration', seconds, 'method', method, 'accessCodeId', null, 'source', 'platform') as data from input where not locked order by n`,
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
 * device decided: DONE → a lock or unlock written here (the lock's state follows the device), any other
 * operation applied by the platform once this resolves (operations.service.ts);
 * REFUSED → 403 with the device's reason, of the kind its `reasonKey` names (other without one);
 * offline → 503 without sending; no answer in time → 504.
 */
export class DeviceOperationRelay implements DeviceRelay {
  private readonly waiting = new Map<string, Waiting>();
  /** Requests a device answered here lately, oldest first: no other instance waits for those answers. */
  private readonly answered = new Set<string>();
  private readonly outcomes = new GroupCommit<Outcome, true>((items) => this.writeOutcomes(items), { missing: true });
  private readonly verifier: OperationVerifier | null;
  /** Local reports being written (tests wait for them). */
  private readonly recording = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly bus: DeviceBus,
    private readonly timeoutMs: number,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
    /** Checks the operations devices report having obeyed on their own; without it such reports are not logged. */
    ca: PlatformCa | null = null,
  ) {
    this.verifier = ca ? new OperationVerifier(ca) : null;
  }

  /** The operation's id is spent already (operations.service.ts, with the device connected). */
  async relay(access: DeviceLockAccess, verified: VerifiedOperation, jws: string, actor: ActivityActor, method: AccessMethod = 'mobile_key'): Promise<void> {
    const type = logTypeOf(verified.operation);
    const deviceId = access.device.id;
    const unavailable = (status: 503 | 504, message: string) => new OperationRefusal(status, message, type, { charged: false, kind: status === 504 ? 'timeout' : 'offline' });
    const requestId = randomUUID();
    const answer = this.awaitResult(requestId, deviceId);
    const message: DeviceOperationMessage = { requestId, jws };
    // The answer is awaited at once, not after the broker's confirmation: a broker sends the operation on
    // to its device as it takes it, and the embedded one confirms only once it has told the other
    // instances too (a commit of its own). A device that answered had the operation; a publish that fails
    // before any answer ends the wait as offline.
    const handOff = { failed: false };
    this.bus.publish(deviceTopic(deviceId, 'op'), JSON.stringify(message)).catch((err: unknown) => {
      if (!this.waiting.has(requestId)) return;
      handOff.failed = true;
      this.settle(requestId, null);
      this.log.warn({ err, deviceId }, 'operation not handed to the broker');
    });
    const result = await answer;
    if (!result) throw handOff.failed ? unavailable(503, deviceErrors.offline) : unavailable(504, deviceErrors.noAnswer);
    if (result.outcome === 'REFUSED') {
      const reason = result.reason?.trim() || deviceLogReasons.noReason;
      // The kind is the catalogue key the device named, else other: the reason is the device's text, never parsed.
      const kind = deviceRefusalKind(result.reasonKey);
      if (kind === 'other' && result.reasonKey !== undefined) this.log.warn({ deviceId, reasonKey: result.reasonKey }, 'device refusal with a reason key the catalogue does not have: counted as other');
      throw new OperationRefusal(403, reason, type, { kind, logReason: deviceLogReasons.refused(reason) });
    }
    await this.carryOut(access, verified, actor, result, method);
  }

  /**
   * A result from a device. Only the device the request went to can answer it; a result for a request
   * this instance is not waiting for (never sent, already timed out, or another instance's) is ignored.
   */
  onResult(deviceId: string, result: DeviceResult): void {
    if (result.method === 'local') {
      const recorded = this.recordLocal(deviceId, result)
        .catch((err: unknown) => this.log.warn({ err, deviceId, requestId: result.requestId }, 'local device outcome not recorded'))
        .finally(() => this.recording.delete(recorded));
      this.recording.add(recorded);
      return;
    }
    const waiting = this.waiting.get(result.requestId);
    if (!waiting) return void this.log.info({ deviceId, requestId: result.requestId }, 'device result for no waiting request: ignored');
    if (waiting.deviceId !== deviceId) return void this.log.warn({ deviceId, requestId: result.requestId }, 'device result from another device than asked: ignored');
    this.settle(result.requestId, result);
  }

  /**
   * Whether a device's message on `…/result` answered a request this instance sent and took, once: the
   * embedded broker then does not send it to the other instances (they would ignore it), which with
   * PostgreSQL is a commit of its own before the answer's outcome can commit.
   */
  takenHere(payload: string | Buffer): boolean {
    let requestId: unknown;
    try {
      requestId = (JSON.parse(payload.toString()) as { requestId?: unknown } | null)?.requestId;
    } catch {
      return false;
    }
    return typeof requestId === 'string' && this.answered.delete(requestId);
  }

  /** Ends every wait as unanswered (the service is closing). */
  stop(): void {
    for (const requestId of [...this.waiting.keys()]) this.settle(requestId, null);
  }

  /** Resolves once every local outcome received so far is written (tests). */
  async settled(): Promise<void> {
    while (this.recording.size > 0) await Promise.all(this.recording);
  }

  /**
   * An outcome the device decided on its own (its local endpoint, `latchkey-device execute`), reported when
   * it could: logged once, whichever instances hear it and however often the device sends it again. Done:
   * the operation must verify — signed under the platform CA by a user, for this device's lock, valid when
   * the device says it decided — and it is logged as that user's, an unlock announced to the webhooks like
   * any other. Refused: one rejected entry for the `count` refusals the report stands for.
   */
  private async recordLocal(deviceId: string, result: DeviceResult): Promise<void> {
    const [lock] = rowsOf<{ lock_id: string; application_id: string; name: string; unlock_time: number }>(
      await this.db.execute(sql`
        select l.id as lock_id, l.application_id, l.name, l.unlock_time from lock_devices d join locks l on l.id = d.lock_id
        where d.id = ${deviceId} and d.certificate_serial is not null`),
    );
    if (!lock) return void this.log.info({ deviceId }, 'local outcome of no provisioned device: ignored');
    const decidedAt = result.at ? Date.parse(result.at) : Date.now();
    if (result.outcome === 'REFUSED') return this.recordLocalRefusals(deviceId, lock, result, decidedAt);
    if (!result.jws || !this.verifier) return void this.log.warn({ deviceId }, 'local outcome without its operation: ignored');
    let verified: VerifiedOperation;
    let userId: string;
    try {
      userId = issuerOf(result.jws);
      verified = this.verifier.verify(result.jws, lock.lock_id, userId, decidedAt);
    } catch (err) {
      return void this.log.warn({ deviceId, reason: err instanceof OperationRefusal ? err.message : String(err) }, 'local outcome whose operation does not verify: ignored');
    }
    const onceKey = `local:${deviceId}:${verified.useKey}`;
    const actor = await this.actorOf(userId, lock.application_id);
    const { operation } = verified;
    if (operation.type === 'MUTATE_LOCK') {
      await this.outcomes.submit({
        lock_id: lock.lock_id,
        application_id: lock.application_id,
        lock_name: lock.name,
        user_id: userId,
        email: actor.email,
        display_name: actor.displayName,
        seconds: operation.duration ?? lock.unlock_time,
        locked: operation.locked,
        device_id: deviceId,
        state_locked: result.state ? result.state.locked : null,
        at: new Date(decidedAt).toISOString(),
        reason: deviceLogReasons.doneLocal,
        decided_at: new Date(decidedAt).toISOString(),
        once_key: onceKey,
        method: 'local',
      });
      return;
    }
    // Shares and settings a device accepted locally are the platform's to apply when sent to it; the log says the lock accepted one.
    await this.db.execute(sql`
      with once as (
        insert into used_operation_ids (id, expires_at) values (${onceKey}, ${new Date(Date.now() + LOCAL_OUTCOME_MEMORY_MS)})
        on conflict do nothing returning id
      )
      insert into lock_activity (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, reason, at)
      select ${lock.lock_id}, ${lock.application_id}, ${logTypeOf(operation)}, ${userId}, ${actor.email}, ${actor.displayName}, ${deviceLogReasons.doneLocal}, ${new Date(decidedAt)}
      from once`);
  }

  /** `count` refusals with one reason, decided at the device's local endpoint: one rejected entry counting them all. */
  private async recordLocalRefusals(deviceId: string, lock: { lock_id: string; application_id: string }, result: DeviceResult, decidedAt: number): Promise<void> {
    const reason = deviceLogReasons.refusedLocal(result.reason?.trim() || deviceLogReasons.noReason);
    await this.db.execute(sql`
      with once as (
        insert into used_operation_ids (id, expires_at) values (${`local:${deviceId}:${result.requestId}`}, ${new Date(Date.now() + LOCAL_OUTCOME_MEMORY_MS)})
        on conflict do nothing returning id
      )
      insert into lock_activity (lock_id, application_id, type, rejected, reason, repeats, at, method)
      select ${lock.lock_id}, ${lock.application_id}, 'UNLOCK', true, ${reason}, ${result.count ?? 1}, ${new Date(Number.isFinite(decidedAt) ? decidedAt : Date.now())}, 'local'
      from once`);
  }

  /** The user as the log names them: an application user of the lock's application, or a platform user (an owner). */
  private async actorOf(userId: string, applicationId: string): Promise<{ email: string | null; displayName: string | null }> {
    const [row] = rowsOf<{ email: string | null; display_name: string | null }>(
      await this.db.execute(sql`
        select email, display_name from application_users where id = ${userId} and application_id = ${applicationId}
        union all select email, display_name from users where id = ${userId} limit 1`),
    );
    return { email: row?.email ?? null, displayName: row?.display_name ?? null };
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
    if (result) {
      this.answered.add(requestId);
      // Bounded: an answer whose message the broker never asks about (an external broker) is forgotten.
      if (this.answered.size > MAX_ANSWERED_REMEMBERED) this.answered.delete(this.answered.values().next().value!);
    }
    clearTimeout(waiting.timer);
    waiting.resolve(result);
  }

  /**
   * The device did a lock or unlock: logged as the device's doing, written with the others that arrive
   * together (lib/group-commit.ts): their log entries, webhook deliveries and the devices' new states in one
   * statement and one commit. Any other operation is the platform's to apply (operations.service.ts).
   */
  private async carryOut(access: DeviceLockAccess, verified: VerifiedOperation, actor: ActivityActor, result: DeviceResult, method: AccessMethod): Promise<void> {
    const { operation } = verified;
    const { lock, device } = access;
    if (operation.type !== 'MUTATE_LOCK') return;
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
      reason: deviceLogReasons.done,
      decided_at: null,
      once_key: null,
      method,
    });
  }

  /**
   * A batch of outcomes: each one's log entry, each unlock's webhook deliveries, and each device's last
   * state in the batch. A device row that already says so is neither updated nor locked (a burst of
   * unlocks of one lock does not queue on its row), and only a row that moved tells the lock's live view.
   * An outcome a device reported afterwards is written only if its once-key is new (the first of a batch).
   */
  private async writeOutcomes(items: (Outcome & { n: number })[]): Promise<Map<number, true>> {
    await this.db.execute(sql`
      with reported as (
        select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as t(
          n int, lock_id uuid, application_id uuid, lock_name text, user_id uuid, email text, display_name text, seconds int, locked boolean,
          device_id uuid, state_locked boolean, at text, reason text, decided_at timestamptz, once_key text, method text)
      ), once as (
        insert into used_operation_ids (id, expires_at)
        select distinct once_key, now() + make_interval(secs => ${LOCAL_OUTCOME_MEMORY_MS / 1000}) from reported where once_key is not null
        on conflict do nothing returning id
      ), input as (
        select * from reported r where r.once_key is null
          or (r.once_key in (select id from once) and r.n = (select min(n) from reported f where f.once_key = r.once_key))
      ), entry as (
        insert into lock_activity (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, subject, reason, at, method)
        select lock_id, application_id, case when locked then 'LOCK' else 'UNLOCK' end, user_id, email, display_name,
          case when locked then null else seconds || ' s' end, reason, coalesce(decided_at, now()), method
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

/** The operation's `iss`, read before it is verified: the verifier then holds it to the leaf's user. */
function issuerOf(jws: string): string {
  const claims = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64').toString('utf8')) as { iss?: unknown } | null;
  return typeof claims?.iss === 'string' ? claims.iss : '';
}
