import { and, asc, eq, isNotNull, sql } from 'drizzle-orm';
import { lockErrors, type DeviceLock, type LockRole, type TimeRule, isUuid } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationOwners, lockDevices, locks, lockShares, users } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { toLock, type LockDeviceRow, type LockRow } from '../locks/locks.service.js';
import type { ShareTerms } from './rules.js';

/**
 * What a lock user may do with one lock: the lock of their application, and their share of it. The
 * application's owners (portal users) are admins of all its locks without a share; an application user
 * has the share an owner (or an admin's ADD_USER) gave them, or none.
 */
export interface LockAccess {
  lock: LockRow;
  /** null: the lock is in the user's application but not shared with them. */
  role: LockRole | null;
  terms: ShareTerms;
  /** The lock's provisioned device, when it has one: then the device decides and acts (DeviceRelay). */
  device?: LockDeviceRow | null;
  /** A portal user's certifiedAfter (epoch ms): operations signed under a certificate issued before it are refused. */
  certifiedAfter?: number | null;
}

const ms = (d: Date | null) => (d ? d.getTime() : null);
const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);
const OPEN: ShareTerms = { start: null, end: null, timeWindow: null };
/** A lock's device joins only once provisioned: until then the lock is still a sandbox lock. */
const provisionedDevice = and(eq(lockDevices.lockId, locks.id), isNotNull(lockDevices.provisionedAt));

/**
 * One statement per kind of user, prepared once per database: the lock with the caller's standing on it.
 * Prepared statements are kept per Db, since tests run several apps (and databases) in one process.
 */
function statementsFor(db: Db) {
  const ownedLock = db
    .select({ lock: locks, device: lockDevices, certifiedAfter: users.certifiedAfter })
    .from(locks)
    .innerJoin(applicationOwners, and(eq(applicationOwners.applicationId, locks.applicationId), eq(applicationOwners.userId, sql.placeholder('userId'))))
    .innerJoin(users, eq(users.id, applicationOwners.userId))
    .leftJoin(lockDevices, provisionedDevice)
    .where(eq(locks.id, sql.placeholder('lockId')))
    .limit(1)
    .prepare('device_owned_lock');
  const sharedLock = db
    .select({ lock: locks, role: lockShares.role, startsAt: lockShares.startsAt, endsAt: lockShares.endsAt, timeWindow: lockShares.timeWindow, device: lockDevices })
    .from(locks)
    .leftJoin(lockShares, and(eq(lockShares.lockId, locks.id), eq(lockShares.userId, sql.placeholder('userId'))))
    .leftJoin(lockDevices, provisionedDevice)
    .where(and(eq(locks.id, sql.placeholder('lockId')), eq(locks.applicationId, sql.placeholder('applicationId'))))
    .limit(1)
    .prepare('device_shared_lock');
  return { ownedLock, sharedLock };
}
const prepared = new WeakMap<Db, ReturnType<typeof statementsFor>>();
function statements(db: Db) {
  let found = prepared.get(db);
  if (!found) prepared.set(db, (found = statementsFor(db)));
  return found;
}

/** The lock and the caller's standing on it; null when it is not a lock of the caller's application. */
export async function getLockAccess(db: Db, user: LockUser, lockId: string): Promise<LockAccess | null> {
  if (!isUuid(lockId)) return null;
  const { ownedLock, sharedLock } = statements(db);
  if (user.kind === 'portal') {
    const [row] = await ownedLock.execute({ userId: user.id, lockId });
    return row ? { lock: row.lock, role: 'ADMIN', terms: OPEN, device: row.device, certifiedAfter: ms(row.certifiedAfter) } : null;
  }
  const [row] = await sharedLock.execute({ userId: user.id, lockId, applicationId: user.applicationId });
  if (!row) return null;
  return {
    lock: row.lock,
    role: row.role,
    terms: { start: ms(row.startsAt), end: ms(row.endsAt), timeWindow: (row.timeWindow as TimeRule | null) ?? null },
    device: row.device,
  };
}

function toDeviceLock(access: LockAccess & { role: LockRole }, startsAt: Date | null, endsAt: Date | null, nowMs: number): DeviceLock {
  const { settings, state } = toLock(access.lock, nowMs, access.device ?? null);
  return { id: access.lock.id, name: access.lock.name, colour: access.lock.colour, role: access.role, start: seconds(startsAt), end: seconds(endsAt), settings, state };
}

/** GET /device/{lockId}: a lock shared with the caller (or of an application they own). */
export async function getDeviceLock(db: Db, user: LockUser, lockId: string): Promise<DeviceLock> {
  const access = await getLockAccess(db, user, lockId);
  if (!access?.role) throw notFound(lockErrors.lockNotFound);
  const date = (value: number | null) => (value === null ? null : new Date(value));
  return toDeviceLock({ ...access, role: access.role }, date(access.terms.start), date(access.terms.end), Date.now());
}

/** GET /device/mine: every lock shared with the caller, oldest first. */
export async function listDeviceLocks(db: Db, user: LockUser): Promise<DeviceLock[]> {
  const now = Date.now();
  if (user.kind === 'portal') {
    const rows = await db
      .select({ lock: locks, device: lockDevices })
      .from(locks)
      .innerJoin(applicationOwners, and(eq(applicationOwners.applicationId, locks.applicationId), eq(applicationOwners.userId, user.id)))
      .leftJoin(lockDevices, provisionedDevice)
      .orderBy(asc(locks.createdAt), asc(locks.id));
    return rows.map((r) => toDeviceLock({ lock: r.lock, role: 'ADMIN', terms: OPEN, device: r.device }, null, null, now));
  }
  const rows = await db
    .select({ lock: locks, role: lockShares.role, startsAt: lockShares.startsAt, endsAt: lockShares.endsAt, device: lockDevices })
    .from(lockShares)
    .innerJoin(locks, eq(locks.id, lockShares.lockId))
    .leftJoin(lockDevices, provisionedDevice)
    .where(and(eq(lockShares.userId, user.id), eq(locks.applicationId, user.applicationId!)))
    .orderBy(asc(locks.createdAt), asc(locks.id));
  return rows.map((r) => toDeviceLock({ lock: r.lock, role: r.role, terms: OPEN, device: r.device }, r.startsAt, r.endsAt, now));
}
