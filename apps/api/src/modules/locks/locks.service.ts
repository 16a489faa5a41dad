import { and, asc, count, eq, sql } from 'drizzle-orm';
import {
  DEFAULT_LOCK_NAME,
  DEFAULT_LOCK_NAMES,
  lockErrors,
  MAX_LOCKS_PER_APPLICATION,
  type CreateLock,
  type Language,
  type Lock,
  type LockDeviceSummary,
  type UpdateLock,
  type UsageRequirements,
  isUuid,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { lockDevices, locks, type LockUsageRequirements } from '../../db/schema.js';
import { conflict, notFound } from '../../errors.js';
import type { AuthUser } from '../../plugins/auth.js';
import { platformActor, recordActivity } from '../activity/activity.service.js';
import { diff, recordChange, type ChangeActor } from '../history/history.service.js';
import { unbindDevicesOfLocks } from '../devices/unbind.service.js';

export type LockRow = typeof locks.$inferSelect;
/** The device bound to a lock (modules/devices); once provisioned it, not the database, holds the lock's state. */
export type LockDeviceRow = typeof lockDevices.$inferSelect;

/**
 * Row → contract Lock at `nowMs`. A sandbox lock's state is derived: unlocked while `unlocked_until` is in
 * the future, so it returns to locked by itself when its unlock time runs out, with nothing to run. A lock
 * with a provisioned device is in the state its device last reported (locked until it reports), and
 * connected while the device's presence is online. `device`: the lock's device (null: none); left out,
 * the answer carries no device summary.
 */
export function toLock(row: LockRow, nowMs: number = Date.now(), device?: LockDeviceRow | null): Lock {
  const lock: Lock = {
    id: row.id,
    applicationId: row.applicationId,
    name: row.name,
    colour: row.colour,
    settings: { unlockTime: row.unlockTime, usageRequirements: row.usageRequirements as UsageRequirements },
    state: lockStateOf(row, nowMs, device),
    createdAt: Math.floor(row.createdAt.getTime() / 1000),
    offlineGraceSeconds: row.offlineGraceSeconds,
    door: row.doorState ?? null,
    battery: row.battery ?? null,
    alarms: (row.alarms ?? []).filter((alarm) => alarm !== VIRTUAL_OFFLINE),
  };
  if (device !== undefined) lock.device = device ? deviceSummaryOf(device) : null;
  return lock;
}

export function lockStateOf(row: LockRow, nowMs: number, device?: LockDeviceRow | null): Lock['state'] {
  if (device?.provisionedAt) return { locked: device.state?.locked ?? true, connected: device.connected, unlockedUntil: null };
  const until = row.unlockedUntil?.getTime() ?? null;
  const unlocked = until !== null && until > nowMs;
  return { locked: !unlocked, connected: !isVirtuallyOffline(row), unlockedUntil: unlocked ? until : null };
}

/**
 * A sandbox lock made to look offline (POST …/simulate/offline) carries this mark among its alarms, so
 * every instance sees it with the row: its state says not connected and its operations are answered as a
 * disconnected device's. The mark is never shown as an alarm.
 */
export const VIRTUAL_OFFLINE = 'offline';
export const isVirtuallyOffline = (row: Pick<LockRow, 'alarms'>): boolean => (row.alarms ?? []).includes(VIRTUAL_OFFLINE);

const epochSeconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

export function deviceSummaryOf(device: LockDeviceRow): LockDeviceSummary {
  return { deviceId: device.id, provisioned: device.provisionedAt !== null, connected: device.connected, lastSeen: epochSeconds(device.lastSeen), firmware: device.firmware };
}

async function deviceOf(db: Db, lockId: string): Promise<LockDeviceRow | null> {
  const [row] = await db.select().from(lockDevices).where(eq(lockDevices.lockId, lockId)).limit(1);
  return row ?? null;
}

/** The lock if it belongs to the application; a malformed or foreign id is the same 404 as a missing one. */
export async function getLockRow(db: Db, applicationId: string, lockId: string): Promise<LockRow> {
  if (!isUuid(lockId)) throw notFound(lockErrors.lockNotFound);
  const [row] = await db
    .select()
    .from(locks)
    .where(and(eq(locks.id, lockId), eq(locks.applicationId, applicationId)))
    .limit(1);
  if (!row) throw notFound(lockErrors.lockNotFound);
  return row;
}

/** A lock by id alone, or null (live events read the lock a change notice names). */
export async function findLock(db: Db, lockId: string): Promise<Lock | null> {
  const [row] = await db.select({ lock: locks, device: lockDevices }).from(locks).leftJoin(lockDevices, eq(lockDevices.lockId, locks.id)).where(eq(locks.id, lockId)).limit(1);
  return row ? toLock(row.lock, Date.now(), row.device) : null;
}

export async function getLock(db: Db, applicationId: string, lockId: string): Promise<Lock> {
  const row = await getLockRow(db, applicationId, lockId);
  return toLock(row, Date.now(), await deviceOf(db, row.id));
}

export async function listLocks(db: Db, applicationId: string): Promise<Lock[]> {
  const rows = await db
    .select({ lock: locks, device: lockDevices })
    .from(locks)
    .leftJoin(lockDevices, eq(lockDevices.lockId, locks.id))
    .where(eq(locks.applicationId, applicationId))
    .orderBy(asc(locks.createdAt), asc(locks.id));
  const now = Date.now();
  return rows.map((r) => toLock(r.lock, now, r.device));
}

/**
 * The lock every new application starts with, named in its creator's language ("Front Door", "Haustür").
 * Called inside the application's own creating transaction, so there is never an application without it.
 */
export async function addFrontDoor(db: Db, applicationId: string, language: Language = 'en'): Promise<void> {
  await db.insert(locks).values({ applicationId, name: DEFAULT_LOCK_NAMES[language] ?? DEFAULT_LOCK_NAME });
}

export async function createLock(db: Db, applicationId: string, input: CreateLock, by: ChangeActor): Promise<Lock> {
  return db.transaction(async (tx) => {
    // Serialises concurrent creations for one application, so the limit cannot be overrun by a race.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`locks:${applicationId}`}))`);
    const [existing] = await tx.select({ n: count() }).from(locks).where(eq(locks.applicationId, applicationId));
    if ((existing?.n ?? 0) >= MAX_LOCKS_PER_APPLICATION) throw conflict(lockErrors.tooManyLocks);
    const [row] = await tx
      .insert(locks)
      .values({ applicationId, name: input.name, colour: input.colour ?? null })
      .returning();
    await recordChange(tx, { applicationId, actor: by, kind: 'lock', subject: row!.name, changes: diff({}, { name: row!.name, colour: row!.colour }) });
    return toLock(row!, Date.now(), null);
  });
}

/** What a settings change says in the log: the names of the settings that changed. */
function changedSettings(before: LockRow, input: UpdateLock): string[] {
  const changed: string[] = [];
  const settings = input.settings;
  if (settings?.unlockTime !== undefined && settings.unlockTime !== before.unlockTime) changed.push('unlockTime');
  if (settings?.usageRequirements !== undefined && JSON.stringify(settings.usageRequirements) !== JSON.stringify(before.usageRequirements))
    changed.push('usageRequirements');
  if (input.offlineGraceSeconds !== undefined && input.offlineGraceSeconds !== before.offlineGraceSeconds) changed.push('offlineGraceSeconds');
  return changed;
}

/**
 * Partial update: name, colour, settings and the offline grace. Only given members change; a settings change is logged
 * (SETTINGS, naming what changed) in the same transaction.
 */
export async function updateLock(db: Db, applicationId: string, lockId: string, input: UpdateLock, by: AuthUser): Promise<Lock> {
  return db.transaction(async (tx) => {
    const before = await getLockRow(tx, applicationId, lockId);
    const set: Partial<typeof locks.$inferInsert> = {};
    if (input.name !== undefined) set.name = input.name;
    if (input.colour !== undefined) set.colour = input.colour;
    if (input.settings?.unlockTime !== undefined) set.unlockTime = input.settings.unlockTime;
    if (input.settings?.usageRequirements !== undefined) set.usageRequirements = input.settings.usageRequirements as LockUsageRequirements;
    if (input.offlineGraceSeconds !== undefined) set.offlineGraceSeconds = input.offlineGraceSeconds;
    if (Object.keys(set).length === 0) return toLock(before, Date.now(), await deviceOf(tx, lockId));
    const [row] = await tx
      .update(locks)
      .set({ ...set, updatedAt: sql`now()` })
      .where(eq(locks.id, lockId))
      .returning();
    const after = row!;
    await recordChange(
      tx,
      { applicationId, actor: by, kind: 'lock', subject: after.name, changes: diff({ name: before.name, colour: before.colour }, { name: after.name, colour: after.colour }) },
      {
        applicationId,
        actor: by,
        kind: 'lock_settings',
        subject: after.name,
        changes: diff(
          { unlockTime: before.unlockTime, usageRequirements: before.usageRequirements, offlineGraceSeconds: before.offlineGraceSeconds },
          { unlockTime: after.unlockTime, usageRequirements: after.usageRequirements, offlineGraceSeconds: after.offlineGraceSeconds },
          'settings.',
        ),
      },
    );
    const changed = changedSettings(before, input);
    if (changed.length > 0) {
      await recordActivity(tx, {
        lockId,
        applicationId,
        type: 'SETTINGS',
        actor: await platformActor(tx, by),
        subject: changed.join(', '),
      });
    }
    return toLock(row!, Date.now(), await deviceOf(tx, lockId));
  });
}

/**
 * Deletes the lock. Its device is unbound first, as "Unbind" does (certificate revoked in the same
 * transaction); answers the unbound devices' ids, which the caller cuts off (`forgetDevice`) once committed.
 */
export async function deleteLock(db: Db, applicationId: string, lockId: string, by: ChangeActor): Promise<string[]> {
  if (!isUuid(lockId)) throw notFound(lockErrors.lockNotFound);
  return db.transaction(async (tx) => {
    const unbound = await unbindDevicesOfLocks(tx, and(eq(locks.id, lockId), eq(locks.applicationId, applicationId))!);
    const [removed] = await tx
      .delete(locks)
      .where(and(eq(locks.id, lockId), eq(locks.applicationId, applicationId)))
      .returning({ name: locks.name, colour: locks.colour });
    if (!removed) throw notFound(lockErrors.lockNotFound);
    await recordChange(tx, { applicationId, actor: by, kind: 'lock', subject: removed.name, changes: diff(removed, { name: null, colour: null }) });
    return unbound;
  });
}
