import { BlockList, isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { apiErrors, checkUsageRequirements, deviceErrors, deviceLogReasons, lockErrors, sdkErrors, type AccessMethod, type UsageRequirements } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { AppError, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { countRepeatedRefusal, recordActivity, type ActivityActor } from '../activity/activity.service.js';
import { publishEvent } from '../../lib/webhook-outbox.js';
import {
  OperationRefusal,
  failedOutcome,
  logTypeOf,
  operationTypeLabel,
  refusal,
  refusedOutcome,
  ruleRefusal,
  type OperationRecorder,
  type RefusalKind,
  type VerifiedOperation,
} from '../../lib/operation-outcome.js';
import { getLockAccess, type LockAccess } from './devices.service.js';
import { DeviceSpendBatcher } from './device-spend.js';
import { MutateLockBatcher, accessMethodOf } from './mutate-lock.js';
import { isVirtuallyOffline } from '../locks/locks.service.js';
import { UsedOperationIdPurge, applyOperation } from './operation-writes.js';
import type { OperationVerifier } from '../../lib/operation-token.js';
import { checkShareTerms } from './rules.js';

/**
 * POST /device/{lockId}/execute — where an unlock is checked. In order: the lock must be in the caller's
 * application (else 404, and nothing is logged: a stranger learns nothing and cannot write to its log);
 * the signed operation must verify (operation-token.ts); the caller's share and the lock's rules must
 * admit it (rules.ts); then the lock's own device checks it again and acts (a real one through the
 * relay; a sandbox lock's virtual device in this process); its id must not have been used (the database's
 * primary key, so across instances). Every refusal after the first check is logged as rejected with its reason, and changes
 * nothing else; an accepted operation and its log entry commit together.
 *
 * The caller's standing on a lock is kept per instance once an operation was accepted with it, so a
 * repeated unlock costs a share of one statement (mutate-lock.ts: unlocks arriving together commit
 * together), which re-checks that standing in the database itself. A cached standing is only ever used to accept: any refusal is decided on a fresh read.
 */
/**
 * Identical refusals (same caller, lock, kind and reason) within this many seconds of a logged one are
 * counted on it (`repeats`): one log entry and one lock.unlock_refused delivery, not one per attempt.
 */
export const REFUSAL_COALESCE_SECONDS = 60;

/**
 * Charges a refusal to the caller before anything is written for it: throws (429) when the caller has
 * used up its budget of refused operations, and then nothing is logged or announced (plugins/rate-limit.ts).
 */
export type ChargeRefusal = () => Promise<void>;

/**
 * A lock with a provisioned device decides for itself: an operation admitted here is handed to the device
 * (modules/devices/runtime/relay.ts). Resolves once the device did it, a lock or unlock written with the
 * device's outcome (any other operation is then applied here); throws an OperationRefusal (logged and
 * answered by `refuse`) when the device refused, is offline or did not answer.
 */
export interface DeviceRelay {
  relay(access: DeviceLockAccess, verified: VerifiedOperation, jws: string, actor: ActivityActor, method?: AccessMethod): Promise<void>;
}
export type DeviceLockAccess = LockAccess & { device: NonNullable<LockAccess['device']> };

/**
 * A lock without a provisioned device is a virtual device in this process (modules/devices/virtual),
 * running the same controller as a real lock: an operation the platform admitted is handed to it, and is
 * applied only if the device did it. Resolves once it did; throws an OperationRefusal (logged and answered
 * by `refuse`) when it refused. `userId` is the signer the platform verified.
 */
export interface VirtualDeviceCheck {
  admit(access: LockAccess, userId: string, verified: VerifiedOperation, jws: string): Promise<void>;
}

export interface OperationContext {
  db: Db;
  verifier: OperationVerifier;
  /** null: every lock is a sandbox lock, decided and changed here. */
  relay: DeviceRelay | null;
  /** null: a sandbox lock's operations are applied once the platform admitted them, with no device of its own. */
  virtual: VirtualDeviceCheck | null;
  /** Standings that let an operation through, by user and lock. */
  standings: LRUCache<string, LockAccess>;
  unlocks: MutateLockBatcher;
  deviceSpends: DeviceSpendBatcher;
  /** The app's purge of expired spent operation ids. */
  purge: UsedOperationIdPurge;
  /** Where each operation's outcome is counted (the metrics); null: not counted. */
  recorder: OperationRecorder | null;
}

export function createOperationContext(
  db: Db,
  verifier: OperationVerifier,
  relay: DeviceRelay | null = null,
  virtual: VirtualDeviceCheck | null = null,
  recorder: OperationRecorder | null = null,
): OperationContext {
  return {
    db,
    verifier,
    relay,
    virtual,
    standings: new LRUCache<string, LockAccess>({ max: 20_000, ttl: 60_000 }),
    unlocks: new MutateLockBatcher(db),
    deviceSpends: new DeviceSpendBatcher(db),
    purge: new UsedOperationIdPurge(db),
    recorder,
  };
}

/** One request to carry out a signed operation: who sent it, for which lock, from where. */
export interface OperationCall {
  user: LockUser;
  lockId: string;
  jws: string;
  /** The caller's address (request.ip): checked against the lock's permitted addresses, when it has any. */
  from: string | null;
  actor: { userId: string; email: string | null; displayName: string | null };
  method: AccessMethod;
  /** The caller's standing on the lock in the cache of standings. */
  key: string;
}

/** What the platform decided of an operation on one reading of the caller's standing. */
export type Decision =
  | { outcome: 'accepted'; verified: VerifiedOperation }
  | { outcome: 'refused'; kind: RefusalKind; message: string; refusal: OperationRefusal };

/** How an operation ended: carried out, refused on a standing (logged against its lock), or its lock is not the caller's to know of. */
type Settled =
  | { outcome: 'accepted'; verified: VerifiedOperation }
  | { outcome: 'refused'; access: LockAccess; refusal: OperationRefusal }
  | { outcome: 'lock-not-found' };

export async function executeOperation(
  context: OperationContext,
  user: LockUser,
  lockId: string,
  jws: string,
  charge: ChargeRefusal = async () => {},
  /** The caller's address (request.ip): checked against the lock's permitted addresses, when it has any. */
  from: string | null = null,
): Promise<void> {
  const actor = { userId: user.id, email: user.email, displayName: user.displayName };
  const call: OperationCall = { user, lockId, jws, from, actor, method: accessMethodOf(user), key: `${user.id}|${lockId}` };
  const count = context.recorder ?? (() => {});
  let settled: Settled;
  try {
    settled = await settle(context, call);
  } catch (error) {
    count(failedOutcome(operationTypeLabel(jws), error));
    throw error;
  }
  await record(context, call, settled, charge, count);
}

/**
 * The verified operation, if the caller's standing (`access`) admits it: its signature and claims
 * (operation-token.ts, unless `verified` already was), then the share, certificate, address and lock rules.
 */
export function decide(verifier: OperationVerifier, call: OperationCall, access: LockAccess, verified: VerifiedOperation | null, nowMs: number): Decision {
  try {
    const admitted = verified ?? verifier.verify(call.jws, call.lockId, call.user.id, nowMs);
    checkAccess(access, admitted, nowMs, call.from);
    return { outcome: 'accepted', verified: admitted };
  } catch (error) {
    if (!(error instanceof OperationRefusal)) throw error;
    return { outcome: 'refused', kind: error.kind, message: error.message, refusal: error };
  }
}

/**
 * Decides and delivers: first on the cached standing, if there is one, which may only accept; then on
 * fresh reads. A standing that changed between the read and the write is read again; three times in a row
 * is not a race (503).
 */
async function settle(context: OperationContext, call: OperationCall): Promise<Settled> {
  const deliveries = { device: new DeviceDelivery(context, call), sandbox: new SandboxDelivery(context, call) };
  const deliveryFor = (access: LockAccess): Delivery => (access.device && context.relay ? deliveries.device : deliveries.sandbox);
  const cached = context.standings.get(call.key);
  let verified: VerifiedOperation | null = null;
  if (cached) {
    let decision: Decision | null;
    try {
      decision = decide(context.verifier, call, cached, null, Date.now());
    } catch {
      decision = null;
    }
    if (decision?.outcome === 'accepted') {
      verified = decision.verified;
      if (verified.operation.type === 'MUTATE_LOCK') {
        const delivered = await deliver(deliveryFor(cached), cached, verified, true);
        if (delivered !== 'stale') return delivered;
      }
    }
    context.standings.delete(call.key);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const access = await getLockAccess(context.db, call.user, call.lockId);
    if (!access) return { outcome: 'lock-not-found' };
    const now = Date.now();
    const decision = decide(context.verifier, call, access, verified, now);
    if (decision.outcome === 'refused') return { outcome: 'refused', access, refusal: decision.refusal };
    verified = decision.verified;
    context.purge.run(now);
    const delivered = await deliver(deliveryFor(access), access, verified, false);
    if (delivered === 'stale') continue;
    if (delivered.outcome === 'accepted' && verified.operation.type === 'MUTATE_LOCK') context.standings.set(call.key, access);
    return delivered;
  }
  throw new AppError(503, apiErrors.serviceUnavailable);
}

async function deliver(delivery: Delivery, access: LockAccess, verified: VerifiedOperation, cached: boolean): Promise<Settled | 'stale'> {
  try {
    const delivered = await delivery.deliver(access, verified, cached);
    return delivered === 'done' ? { outcome: 'accepted', verified } : 'stale';
  } catch (error) {
    if (error instanceof OperationRefusal) return { outcome: 'refused', access, refusal: error };
    throw error;
  }
}

/**
 * Counts the outcome; a refusal is charged, logged and answered (`refuse`), a lock not the caller's to
 * know of answered 404 with nothing logged.
 */
async function record(context: OperationContext, call: OperationCall, settled: Settled, charge: ChargeRefusal, count: OperationRecorder): Promise<void> {
  if (settled.outcome === 'accepted') return count({ outcome: 'accepted', type: settled.verified.operation.type });
  const type = operationTypeLabel(call.jws);
  if (settled.outcome === 'lock-not-found') {
    count({ outcome: 'refused', type, reason: 'lockNotFound' });
    throw notFound(lockErrors.lockNotFound);
  }
  try {
    await refuse(context.db, settled.access, call.actor, settled.refusal, charge, call.method);
  } catch (error) {
    count(error === settled.refusal ? refusedOutcome(type, settled.refusal) : failedOutcome(type, error));
    throw error;
  }
}

/**
 * How an admitted operation reaches its lock, chosen by the lock: its own device (DeviceDelivery) or the
 * sandbox (SandboxDelivery). Resolves 'done' once it was carried out and logged, 'stale' when the standing
 * it was decided on changed before it was written (decide again on a fresh read); throws an
 * OperationRefusal when the lock or the platform refused it. `cached`: decided on a cached standing.
 */
interface Delivery {
  deliver(access: LockAccess, verified: VerifiedOperation, cached: boolean): Promise<'done' | 'stale'>;
}

const offline = (verified: VerifiedOperation) => new OperationRefusal(503, deviceErrors.offline, logTypeOf(verified.operation), { charged: false, kind: 'offline' });

/** A device-backed lock: the operation's id is spent only if the standing and the device still hold, then the device decides. */
class DeviceDelivery implements Delivery {
  constructor(
    private readonly context: OperationContext,
    private readonly call: OperationCall,
  ) {}

  async deliver(access: LockAccess, verified: VerifiedOperation, cached: boolean): Promise<'done' | 'stale'> {
    const { deviceSpends, relay, db } = this.context;
    const { user, jws, actor, method } = this.call;
    const lock = access as DeviceLockAccess;
    if (!cached && !lock.device.connected) throw offline(verified);
    const spent = await deviceSpends.submit(user, lock, verified);
    if (spent === 'stale') return 'stale';
    if (spent === 'offline') throw offline(verified);
    if (spent === 'replayed') throw refusal('replayed', 409, logTypeOf(verified.operation));
    await relay!.relay(lock, verified, jws, actor, method);
    // The device did it: a lock or unlock is written with its outcome; anything else the platform applies now.
    if (verified.operation.type !== 'MUTATE_LOCK') await applyOperation(db, access, verified, actor, { spent: true, reason: deviceLogReasons.done });
    return 'done';
  }
}

/**
 * A sandbox lock: its virtual device (when there is one) sees the operation once, after the platform
 * admitted it, and what it did stands; then the platform writes it. The device's refusal on a cached
 * standing waits for the platform's fresh read: the platform's own refusal comes first, and the device's
 * is answered only if the platform admits the operation again.
 */
class SandboxDelivery implements Delivery {
  private asked = false;
  private refused: OperationRefusal | null = null;

  constructor(
    private readonly context: OperationContext,
    private readonly call: OperationCall,
  ) {}

  async deliver(access: LockAccess, verified: VerifiedOperation, cached: boolean): Promise<'done' | 'stale'> {
    const { db, unlocks } = this.context;
    const { user, actor } = this.call;
    // A sandbox lock made to look offline answers as a disconnected device does (nothing is sent to its virtual device).
    if (!cached && !access.device && isVirtuallyOffline(access.lock)) throw offline(verified);
    if (!(await this.askDevice(access, verified, cached))) return 'stale';
    if (verified.operation.type !== 'MUTATE_LOCK') {
      await applyOperation(db, access, verified, actor);
      return 'done';
    }
    const outcome = await unlocks.submit(user, access, verified, actor);
    if (outcome === 'replayed') throw refusal('replayed', 409, logTypeOf(verified.operation));
    return outcome;
  }

  /** Whether the virtual device did it (or there is none to ask); false: it refused on a cached standing. */
  private async askDevice(access: LockAccess, verified: VerifiedOperation, cached: boolean): Promise<boolean> {
    const { virtual } = this.context;
    if (this.refused) throw this.refused;
    if (this.asked || !virtual || access.device) return true;
    this.asked = true;
    try {
      await virtual.admit(access, this.call.user.id, verified, this.call.jws);
      return true;
    } catch (error) {
      if (!(error instanceof OperationRefusal)) throw error;
      this.refused = error;
      if (cached) return false;
      throw error;
    }
  }
}

/**
 * Charges the refusal to the caller (over its budget: 429, nothing written), then logs it; a refused
 * unlock is also announced (lock.unlock_refused), in the same transaction. The same refusal again within
 * REFUSAL_COALESCE_SECONDS only counts on the entry already written, and announces nothing more.
 */
async function refuse(
  db: Db,
  access: LockAccess,
  actor: { userId: string; email: string | null; displayName: string | null },
  refusal: OperationRefusal,
  charge: ChargeRefusal,
  method: AccessMethod,
): Promise<never> {
  if (refusal.options.charged !== false) await charge();
  const { lock } = access;
  const reason = refusal.options.logReason ?? refusal.message;
  const opening = refusal.logType === 'UNLOCK' || refusal.logType === 'LOCK';
  const entry = { lockId: lock.id, applicationId: lock.applicationId, type: refusal.logType, actor, rejected: true, reason, method: opening ? method : null };
  await db.transaction(async (tx) => {
    if (await countRepeatedRefusal(tx, entry, REFUSAL_COALESCE_SECONDS)) return;
    await recordActivity(tx, entry);
    if (refusal.logType === 'UNLOCK') {
      await publishEvent(tx, lock.applicationId, 'lock.unlock_refused', {
        applicationId: lock.applicationId,
        lockId: lock.id,
        lockName: lock.name,
        userId: actor.userId,
        email: actor.email,
        reason,
        method,
        accessCodeId: null,
        source: 'platform',
      });
    }
  });
  throw refusal;
}

/** The caller's share (bounds, window, role), a certificate not ended, and, to use the lock, its time and location rules. */
function checkAccess(access: LockAccess, verified: VerifiedOperation, nowMs: number, from: string | null): void {
  const { operation } = verified;
  const type = logTypeOf(operation);
  if (!access.role) throw refusal('noAccess', 403, type);
  // Signed under a certificate the user's password reset or change ended.
  if (access.certifiedAfter != null && verified.certifiedFrom < access.certifiedAfter) throw refusal('certificateRevoked', 403, type);
  const shareProblem = checkShareTerms(access.terms, nowMs);
  if (shareProblem) throw ruleRefusal(shareProblem, 403, type);
  if (!addressPermitted(access.lock.permittedAddresses, from)) throw new OperationRefusal(403, sdkErrors.addressNotPermitted, type, { kind: 'other' });
  if (operation.type !== 'MUTATE_LOCK') {
    if (access.role !== 'ADMIN') throw refusal('adminOnly', 403, type);
    return;
  }
  const ruleProblem = checkUsageRequirements(access.lock.usageRequirements as UsageRequirements, verified.location, nowMs);
  if (ruleProblem) throw ruleRefusal(ruleProblem, 403, type);
}

/**
 * A lock whose admin listed permitted addresses (the SDKs' `settings.permittedAddresses`) takes
 * operations only from them; none listed, from anywhere. An IPv4 caller seen as IPv4-mapped IPv6 matches its
 * IPv4 address (BlockList compares them so). Lists are kept per list, by reference, so each is built once.
 */
const permittedLists = new WeakMap<string[], BlockList>();
export function addressPermitted(permitted: string[], from: string | null): boolean {
  if (permitted.length === 0) return true;
  const family = from ? isIP(from) : 0;
  if (!from || family === 0) return false;
  let list = permittedLists.get(permitted);
  if (!list) {
    list = new BlockList();
    for (const address of permitted) {
      const kind = isIP(address);
      if (kind) list.addAddress(address, kind === 4 ? 'ipv4' : 'ipv6');
    }
    permittedLists.set(permitted, list);
  }
  return list.check(from, family === 4 ? 'ipv4' : 'ipv6');
}
