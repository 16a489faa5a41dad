import { BlockList, isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { apiErrors, checkUsageRequirements, deviceErrors, lockErrors, operationErrors, sdkErrors, type AccessMethod, type UsageRequirements } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { AppError, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { countRepeatedRefusal, recordActivity, type ActivityActor } from '../activity/activity.service.js';
import { publishEvent } from '../../lib/webhook-outbox.js';
import { getLockAccess, type LockAccess } from './devices.service.js';
import { DeviceSpendBatcher, type DeviceSpendOutcome } from './device-spend.js';
import { MutateLockBatcher, accessMethodOf } from './mutate-lock.js';
import { isVirtuallyOffline } from '../locks/locks.service.js';
import { applyOperation, purgeUsedOperationIds } from './operation-writes.js';
import { OperationRefusal, logTypeOf, type OperationVerifier, type VerifiedOperation } from './operation-token.js';
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
 * and its answer carried out (modules/devices/runtime/relay.ts). Resolves once the outcome is applied and
 * logged; throws an OperationRefusal (logged and answered by `refuse`) when the device refused, is
 * offline or did not answer.
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
/** What a relay needs to spend an operation, refuse it, or carry out what the device did. */
export { OperationRefusal, logTypeOf, type VerifiedOperation } from './operation-token.js';
export { applyOperation } from './operation-writes.js';

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
}

export function createOperationContext(
  db: Db,
  verifier: OperationVerifier,
  relay: DeviceRelay | null = null,
  virtual: VirtualDeviceCheck | null = null,
): OperationContext {
  return {
    db,
    verifier,
    relay,
    virtual,
    standings: new LRUCache<string, LockAccess>({ max: 20_000, ttl: 60_000 }),
    unlocks: new MutateLockBatcher(db),
    deviceSpends: new DeviceSpendBatcher(db),
  };
}

export async function executeOperation(
  { db, verifier, relay, virtual, standings, unlocks, deviceSpends }: OperationContext,
  user: LockUser,
  lockId: string,
  jws: string,
  charge: ChargeRefusal = async () => {},
  /** The caller's address (request.ip): checked against the lock's permitted addresses, when it has any. */
  from: string | null = null,
): Promise<void> {
  const actor = { userId: user.id, email: user.email, displayName: user.displayName };
  const method = accessMethodOf(user);
  const key = `${user.id}|${lockId}`;
  const cached = standings.get(key);
  let verified: VerifiedOperation | null = null;
  // A sandbox lock's virtual device sees the operation once, after the platform admitted it, and what it
  // did stands. Its refusal on a cached standing waits for the platform's fresh read: the platform's own
  // refusal comes first, and the device's is answered only if the platform admits the operation again.
  let deviceAsked = false;
  let deviceRefusal: OperationRefusal | null = null;
  const askDevice = async (access: LockAccess, admitted: VerifiedOperation) => {
    if (deviceRefusal) throw deviceRefusal;
    if (deviceAsked || !virtual || access.device) return;
    deviceAsked = true;
    try {
      await virtual.admit(access, user.id, admitted, jws);
    } catch (error) {
      if (error instanceof OperationRefusal) deviceRefusal = error;
      throw error;
    }
  };
  // A device-backed lock's operation after its spend: handed to the device when spent; else an OperationRefusal.
  const relaySpent = async (access: DeviceLockAccess, admitted: VerifiedOperation, spent: Exclude<DeviceSpendOutcome, 'stale'>): Promise<void> => {
    const type = logTypeOf(admitted.operation);
    if (spent === 'offline') throw new OperationRefusal(503, deviceErrors.offline, type, { charged: false });
    if (spent === 'replayed') throw new OperationRefusal(409, operationErrors.replayed, type);
    await relay!.relay(access, admitted, jws, actor, method);
  };
  if (cached) {
    try {
      verified = verifier.verify(jws, lockId, user.id);
      checkAccess(cached, verified, Date.now(), from);
    } catch {
      verified = null;
    }
    if (verified?.operation.type === 'MUTATE_LOCK' && cached.device && relay) {
      // A device-backed lock: its id is spent only if the standing and the device still hold.
      const spent = await deviceSpends.submit(user, cached as DeviceLockAccess, verified);
      if (spent !== 'stale') {
        return relaySpent(cached as DeviceLockAccess, verified, spent).catch((error: unknown) => {
          if (error instanceof OperationRefusal) return refuse(db, cached, actor, error, charge, method);
          throw error;
        });
      }
    } else if (verified?.operation.type === 'MUTATE_LOCK' && (await askDevice(cached, verified).then(() => true, refusedOnly))) {
      const outcome = await unlocks.submit(user, cached, verified, actor);
      if (outcome === 'done') return;
      if (outcome === 'replayed') return refuse(db, cached, actor, new OperationRefusal(409, operationErrors.replayed, logTypeOf(verified.operation)), charge, method);
    }
    standings.delete(key);
  }

  // A standing that changed between the read and the write is read again; twice in a row is not a race.
  for (let attempt = 0; attempt < 3; attempt++) {
    const access = await getLockAccess(db, user, lockId);
    if (!access) throw notFound(lockErrors.lockNotFound);
    try {
      const now = Date.now();
      verified ??= verifier.verify(jws, lockId, user.id, now);
      checkAccess(access, verified, now, from);
      purgeUsedOperationIds(db, now);
      if (access.device && relay) {
        if (!access.device.connected) return await relaySpent(access as DeviceLockAccess, verified, 'offline');
        const spent = await deviceSpends.submit(user, access as DeviceLockAccess, verified);
        if (spent === 'stale') continue;
        await relaySpent(access as DeviceLockAccess, verified, spent);
        if (verified.operation.type === 'MUTATE_LOCK') standings.set(key, access);
        return;
      }
      // A sandbox lock made to look offline answers as a disconnected device does (nothing is sent to its virtual device).
      if (!access.device && isVirtuallyOffline(access.lock)) throw new OperationRefusal(503, deviceErrors.offline, logTypeOf(verified.operation), { charged: false });
      await askDevice(access, verified);
      if (verified.operation.type !== 'MUTATE_LOCK') return await applyOperation(db, access, verified, actor);
      const outcome = await unlocks.submit(user, access, verified, actor);
      if (outcome === 'replayed') throw new OperationRefusal(409, operationErrors.replayed, logTypeOf(verified.operation));
      if (outcome === 'done') return void standings.set(key, access);
    } catch (error) {
      if (error instanceof OperationRefusal) return refuse(db, access, actor, error, charge, method);
      throw error;
    }
  }
  throw new AppError(503, apiErrors.serviceUnavailable);
}

/** false for an OperationRefusal (answered later, after a fresh read); anything else is rethrown. */
function refusedOnly(error: unknown): false {
  if (error instanceof OperationRefusal) return false;
  throw error;
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
  if (!access.role) throw new OperationRefusal(403, operationErrors.noAccess, type);
  // Signed under a certificate the user's password reset or change ended.
  if (access.certifiedAfter != null && verified.certifiedFrom < access.certifiedAfter) throw new OperationRefusal(403, operationErrors.certificateRevoked, type);
  const shareProblem = checkShareTerms(access.terms, nowMs);
  if (shareProblem) throw new OperationRefusal(403, shareProblem, type);
  if (!addressPermitted(access.lock.permittedAddresses, from)) throw new OperationRefusal(403, sdkErrors.addressNotPermitted, type);
  if (operation.type !== 'MUTATE_LOCK') {
    if (access.role !== 'ADMIN') throw new OperationRefusal(403, operationErrors.adminOnly, type);
    return;
  }
  const ruleProblem = checkUsageRequirements(access.lock.usageRequirements as UsageRequirements, verified.location, nowMs);
  if (ruleProblem) throw new OperationRefusal(403, ruleProblem, type);
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
