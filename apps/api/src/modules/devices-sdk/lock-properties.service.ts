import { and, asc, desc, eq, gte, inArray, isNotNull, lte, sql, type SQL } from 'drizzle-orm';
import {
  AUDIT_EVENTS,
  SDK_AUDIT_LOG_TYPES,
  GEOFENCE_ACCURACY_M,
  LOCATION_ACCURACIES,
  SDK_AUDIT_MAX_ENTRIES,
  lockErrors,
  sdkErrors,
  type LocationAccuracy,
  type LockRole,
  type SdkAuditEntry,
  type SdkLock,
  type SdkLockUser,
  type SdkLocationRule,
  type SdkUserLocks,
  type UpdateLockProperties,
  type UsageRequirements,
  isUuid,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationOwners, applicationUsers, lockActivity, lockDevices, locks, lockShares, lockUserSettings, type LockUsageRequirements } from '../../db/schema.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { recordActivity } from '../activity/activity.service.js';
import { diff, recordChange } from '../history/history.service.js';
import { lockStateOf, type LockRow } from '../locks/locks.service.js';
import { getLockAccess, type LockAccess } from '../operations/devices.service.js';
import { DIRECTORY_PUBLIC_KEY } from './directory.service.js';

/**
 * Lock properties as the platform's SDKs read and write them (docs/sdk-parity.md): the caller's
 * own alias, favourite and colour (lock_user_settings), an admin's lock settings (name, permitted
 * addresses, hidden, usage requirements), who a lock is shared with, a user's locks and the audit trail.
 * Every lock is reached through getLockAccess: a lock of another application is the same 404 as none.
 */

type Prefs = typeof lockUserSettings.$inferSelect;
const SUPPORTED = 'SUPPORTED' as const;
/** What a sandbox lock can do, as the SDK asks before a batch share (BATCH_SHARING_25). */
const CAPABILITIES = { CONFIGURABLE_UNLOCK_DURATION: SUPPORTED, OPEN_HOURS: SUPPORTED, BATCH_SHARING_25: SUPPORTED };

/** Epoch seconds as the SDK parses text times (`toDouble()`), e.g. "1700000000" or "1700000000.25". */
const secondsText = (ms: number | null) => (ms === null ? null : String(ms / 1000));
const seconds = (d: Date | null) => (d ? d.getTime() / 1000 : null);

/** A tier as metres (the SDK's Int), and metres as the tightest tier that admits them. */
export const tierMetres = (tier: LocationAccuracy) => GEOFENCE_ACCURACY_M[tier];
export function metresTier(metres: number): LocationAccuracy {
  return LOCATION_ACCURACIES.find((tier) => metres <= GEOFENCE_ACCURACY_M[tier]) ?? 'LOW';
}

function requireAccess(access: LockAccess | null): LockAccess & { role: LockRole } {
  if (!access?.role) throw notFound(lockErrors.lockNotFound);
  return access as LockAccess & { role: LockRole };
}
/** An admin whose share has not started or has ended is no admin (yet, or any more). */
const withinBounds = (terms: LockAccess['terms'], nowMs = Date.now()) => (terms.start === null || terms.start <= nowMs) && (terms.end === null || terms.end > nowMs);
function requireAdmin(access: LockAccess | null): LockAccess & { role: LockRole } {
  const found = requireAccess(access);
  if (found.role !== 'ADMIN' || !withinBounds(found.terms)) throw new AppError(403, sdkErrors.notAdmin);
  return found;
}

async function prefsOf(db: Db, userId: string, lockIds: string[]): Promise<Map<string, Prefs>> {
  if (lockIds.length === 0) return new Map();
  const rows = await db.select().from(lockUserSettings).where(and(eq(lockUserSettings.userId, userId), inArray(lockUserSettings.lockId, lockIds)));
  return new Map(rows.map((r) => [r.lockId, r]));
}

/**
 * The tiles linked to each lock (the tiles/sites module's `tile_locks`, migration 0013). Read by name, so
 * this module does not depend on that one; where the table is not there, a lock has no tiles.
 */
async function tilesOf(db: Db, lockIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (lockIds.length === 0) return out;
  try {
    const result = await db.execute(
      sql`select tile_id::text as tile_id, lock_id::text as lock_id from tile_locks where lock_id in (${sql.join(lockIds.map((id) => sql`${id}::uuid`), sql`, `)}) order by created_at, tile_id`,
    );
    const rows = ((result as { rows?: unknown[] }).rows ?? (result as unknown as unknown[])) as { tile_id: string; lock_id: string }[];
    for (const row of rows) out.set(row.lock_id, [...(out.get(row.lock_id) ?? []), row.tile_id]);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P01') throw error;
  }
  return out;
}

export function toSdkLock(access: LockAccess & { role: LockRole }, prefs: Prefs | undefined, tiles: string[], nowMs = Date.now()): SdkLock {
  const { lock, role, terms } = access;
  const requirements = lock.usageRequirements as UsageRequirements;
  const time = (requirements.time ?? []).map((r) => ({ start: r.start, end: r.end, timezone: r.timezone, days: [...r.days] }));
  const location = requirements.location
    ? { latitude: requirements.location.latitude, longitude: requirements.location.longitude, enabled: requirements.location.enabled, radius: requirements.location.radius, accuracy: tierMetres(requirements.location.accuracy) }
    : null;
  const device = access.device ?? null;
  const state = lockStateOf(lock, nowMs, device);
  return {
    id: lock.id,
    name: prefs?.alias ?? lock.name,
    colour: prefs?.colour ?? lock.colour,
    start: secondsText(terms.start),
    end: secondsText(terms.end),
    role,
    favourite: prefs?.favourite ?? false,
    unlockTime: lock.unlockTime,
    settings: {
      unlockTime: lock.unlockTime,
      permittedAddresses: lock.permittedAddresses,
      defaultName: lock.name,
      usageRequirements: { time, location },
      unlockBetweenWindow: time[0] ? { ...time[0], exceptions: [] } : null,
      tiles,
      hidden: lock.hidden,
      // The local endpoints the lock's device announced in its state: the SDK tries them beside the cloud.
      directAccessEndpoints: device?.state?.directAccessEndpoints ?? [],
      capabilities: CAPABILITIES,
    },
    state: { locked: state.locked, connected: state.connected },
    lastSeen: device?.lastSeen ? Math.floor(device.lastSeen.getTime() / 1000) : null,
  };
}

/** GET /device/{lockId} with `Accept: application/vnd.doordeck.api-v3+json` (BasicLockResponse). */
export async function getSdkLock(db: Db, user: LockUser, lockId: string): Promise<SdkLock> {
  const access = requireAccess(await getLockAccess(db, user, lockId));
  const [prefs, tiles] = await Promise.all([prefsOf(db, user.id, [lockId]), tilesOf(db, [lockId])]);
  return toSdkLock(access, prefs.get(lockId), tiles.get(lockId) ?? []);
}

/** The locks the caller may use or administer, with their standing (owners: every lock of their applications). */
async function accessibleLocks(db: Db, user: LockUser, onlyAdmin = false): Promise<(LockAccess & { role: LockRole })[]> {
  const open = { start: null, end: null, timeWindow: null };
  if (user.kind === 'portal') {
    const rows = await db
      .select({ lock: locks, device: lockDevices })
      .from(locks)
      .innerJoin(applicationOwners, and(eq(applicationOwners.applicationId, locks.applicationId), eq(applicationOwners.userId, user.id)))
      .leftJoin(lockDevices, and(eq(lockDevices.lockId, locks.id), isNotNull(lockDevices.provisionedAt)))
      .orderBy(asc(locks.createdAt), asc(locks.id));
    return rows.map((r) => ({ lock: r.lock, role: 'ADMIN' as const, terms: open, device: r.device }));
  }
  const rows = await db
    .select({ lock: locks, share: lockShares, device: lockDevices })
    .from(lockShares)
    .innerJoin(locks, eq(locks.id, lockShares.lockId))
    .leftJoin(lockDevices, and(eq(lockDevices.lockId, locks.id), isNotNull(lockDevices.provisionedAt)))
    .where(and(eq(lockShares.userId, user.id), eq(locks.applicationId, user.applicationId!), onlyAdmin ? eq(lockShares.role, 'ADMIN') : undefined))
    .orderBy(asc(locks.createdAt), asc(locks.id));
  const now = Date.now();
  return rows
    .map((r) => ({
      lock: r.lock,
      role: r.share.role,
      terms: { start: r.share.startsAt?.getTime() ?? null, end: r.share.endsAt?.getTime() ?? null, timeWindow: null },
      device: r.device,
    }))
    .filter((a) => !onlyAdmin || withinBounds(a.terms, now));
}

/** GET /device/favourite: the caller's favourite locks that an admin has not hidden. */
export async function listFavourites(db: Db, user: LockUser): Promise<SdkLock[]> {
  const favourites = await db.select().from(lockUserSettings).where(and(eq(lockUserSettings.userId, user.id), eq(lockUserSettings.favourite, true)));
  if (favourites.length === 0) return [];
  const prefs = new Map(favourites.map((f) => [f.lockId, f]));
  const mine = (await accessibleLocks(db, user)).filter((a) => prefs.has(a.lock.id) && !a.lock.hidden);
  const tiles = await tilesOf(db, mine.map((a) => a.lock.id));
  const now = Date.now();
  return mine.map((a) => toSdkLock(a, prefs.get(a.lock.id), tiles.get(a.lock.id) ?? [], now));
}

/** GET /device/shareable: the locks the caller is an admin of, by the name the caller sees. */
export async function listShareable(db: Db, user: LockUser): Promise<{ id: string; name: string }[]> {
  const admin = await accessibleLocks(db, user, true);
  const prefs = await prefsOf(db, user.id, admin.map((a) => a.lock.id));
  return admin.map((a) => ({ id: a.lock.id, name: prefs.get(a.lock.id)?.alias ?? a.lock.name }));
}

/**
 * PUT /device/{lockId}: the caller's alias, favourite and colour (anyone the lock is shared with), and an
 * admin's settings. Checked whole before anything is written; the settings change, its SETTINGS log entry
 * and its history entry commit together.
 */
export async function updateLockProperties(db: Db, user: LockUser, lockId: string, body: UpdateLockProperties): Promise<void> {
  const access = requireAccess(await getLockAccess(db, user, lockId));
  const own = body.name !== undefined || body.favourite !== undefined || body.colour !== undefined;
  if (!own && body.settings === undefined) throw badRequest(sdkErrors.nothingToChange);
  const settings = body.settings;
  if (settings !== undefined && (access.role !== 'ADMIN' || !withinBounds(access.terms))) throw new AppError(403, sdkErrors.notAdmin);
  if (settings?.defaultName === null) throw badRequest(sdkErrors.defaultNameRequired);
  const { lock } = access;

  await db.transaction(async (tx) => {
    if (own) {
      const values = {
        ...(body.name !== undefined ? { alias: body.name } : {}),
        ...(body.favourite !== undefined ? { favourite: body.favourite ?? false } : {}),
        ...(body.colour !== undefined ? { colour: body.colour } : {}),
      };
      await tx
        .insert(lockUserSettings)
        .values({ lockId, userId: user.id, ...values })
        .onConflictDoUpdate({ target: [lockUserSettings.lockId, lockUserSettings.userId], set: { ...values, updatedAt: sql`now()` } });
    }
    if (settings === undefined) return;
    const [fresh] = await tx.select().from(locks).where(eq(locks.id, lockId)).for('update');
    if (!fresh) throw notFound(lockErrors.lockNotFound);
    const next = nextSettings(fresh, settings);
    await tx.update(locks).set({ ...next, updatedAt: sql`now()` }).where(eq(locks.id, lockId));
    const before = { name: fresh.name, permittedAddresses: fresh.permittedAddresses, hidden: fresh.hidden, usageRequirements: fresh.usageRequirements };
    const changes = diff(before, { ...before, ...next }, 'settings.');
    const actor = { userId: user.id, email: user.email, displayName: user.displayName };
    await recordActivity(tx as unknown as Db, { lockId, applicationId: lock.applicationId, type: 'SETTINGS', actor, subject: changes.map((c) => c.field.replace('settings.', '')).join(', ') || null });
    await recordChange(tx as unknown as Db, { applicationId: lock.applicationId, actor: { id: user.id, email: user.email }, kind: 'lock_settings', subject: fresh.name, changes });
  });
}

type SettingsBody = NonNullable<UpdateLockProperties['settings']>;
function nextSettings(lock: LockRow, settings: SettingsBody | null): Partial<Pick<LockRow, 'name' | 'permittedAddresses' | 'hidden' | 'usageRequirements'>> {
  // `settings: null` (UpdateLockSettingRequest(null)): the SDK's way of changing nothing in particular.
  if (settings === null) return {};
  const next: Partial<Pick<LockRow, 'name' | 'permittedAddresses' | 'hidden' | 'usageRequirements'>> = {};
  if (settings.defaultName != null) next.name = settings.defaultName;
  if (settings.permittedAddresses !== undefined) next.permittedAddresses = [...new Set(settings.permittedAddresses)];
  if (settings.hidden !== undefined) next.hidden = settings.hidden;
  if (settings.usageRequirements !== undefined) {
    const requirements: LockUsageRequirements = { ...(lock.usageRequirements as LockUsageRequirements) };
    const given = settings.usageRequirements;
    if (given === null) {
      delete requirements.time;
      delete requirements.location;
    } else {
      if (given.time !== undefined) {
        if (given.time.length) requirements.time = given.time.map((r) => ({ start: r.start, end: r.end, timezone: r.timezone, days: [...new Set(r.days)] }));
        else delete requirements.time;
      }
      if (given.location !== undefined) {
        if (given.location) requirements.location = toLocationRule(given.location);
        else delete requirements.location;
      }
    }
    next.usageRequirements = requirements;
  }
  return next;
}

function toLocationRule(rule: SdkLocationRule): NonNullable<LockUsageRequirements['location']> {
  return { latitude: rule.latitude, longitude: rule.longitude, radius: rule.radius, accuracy: metresTier(rule.accuracy), enabled: rule.enabled };
}

/** GET /device/{lockId}/users (admins): everyone the lock is shared with. */
export async function listLockUsers(db: Db, user: LockUser, lockId: string): Promise<SdkLockUser[]> {
  requireAdmin(await getLockAccess(db, user, lockId));
  const rows = await db
    .select({ share: lockShares, user: applicationUsers })
    .from(lockShares)
    .innerJoin(applicationUsers, eq(applicationUsers.id, lockShares.userId))
    .where(eq(lockShares.lockId, lockId))
    .orderBy(asc(lockShares.createdAt), asc(lockShares.userId));
  return rows.map((r) => ({ ...sdkUser(r.user), role: r.share.role, start: seconds(r.share.startsAt), end: seconds(r.share.endsAt) }));
}

function sdkUser(user: typeof applicationUsers.$inferSelect) {
  return { userId: user.id, email: user.email ?? '', publicKey: DIRECTORY_PUBLIC_KEY, displayName: user.displayName, orphan: user.status === 'pending', foreign: false };
}

/**
 * The application user `userId` as the caller may see them: in the caller's application (an owner: in one
 * of theirs), and only when the caller administers at least one lock (else 403); the locks listed are
 * those of the user's that the caller administers.
 */
async function visibleUser(db: Db, user: LockUser, userId: string) {
  if (!isUuid(userId)) throw notFound(sdkErrors.userNotFound);
  const [target] = await db.select().from(applicationUsers).where(eq(applicationUsers.id, userId)).limit(1);
  const admin = await accessibleLocks(db, user, true);
  const inScope =
    target && (user.kind === 'portal' ? admin.some((a) => a.lock.applicationId === target.applicationId) || (await ownsApplication(db, user.id, target.applicationId)) : target.applicationId === user.applicationId);
  if (!target || !inScope) throw notFound(sdkErrors.userNotFound);
  if (admin.length === 0) throw new AppError(403, sdkErrors.notAdminOfAny);
  return { target, adminLockIds: admin.map((a) => a.lock.id) };
}
async function ownsApplication(db: Db, userId: string, applicationId: string): Promise<boolean> {
  const [row] = await db.select({ id: applicationOwners.userId }).from(applicationOwners).where(and(eq(applicationOwners.userId, userId), eq(applicationOwners.applicationId, applicationId))).limit(1);
  return Boolean(row);
}

/** GET /user/{userId}: the user, and their shares of the locks the caller administers. */
export async function getUserLocks(db: Db, user: LockUser, userId: string): Promise<SdkUserLocks> {
  const { target, adminLockIds } = await visibleUser(db, user, userId);
  const shares = await db
    .select()
    .from(lockShares)
    .where(and(eq(lockShares.userId, target.id), inArray(lockShares.lockId, adminLockIds)))
    .orderBy(asc(lockShares.createdAt), asc(lockShares.lockId));
  return {
    ...sdkUser(target),
    start: null,
    end: null,
    devices: shares.map((s) => ({ deviceId: s.lockId, role: s.role, start: seconds(s.startsAt), end: seconds(s.endsAt) })),
  };
}

type ActivityRow = typeof lockActivity.$inferSelect;
function toAuditEntry(row: ActivityRow): SdkAuditEntry {
  return {
    deviceId: row.lockId,
    timestamp: String(row.at.getTime() / 1000),
    // Only types the SDK names are read (audit below).
    type: AUDIT_EVENTS[row.type]!,
    issuer: { userId: row.actorUserId ?? '', email: row.actorEmail, displayName: row.actorDisplayName },
    subject: null,
    rejectionReason: row.rejected ? row.reason : null,
    rejected: row.rejected,
  };
}

async function audit(db: Db, where: SQL | undefined, query: { start?: number; end?: number }): Promise<SdkAuditEntry[]> {
  const rows = await db
    .select()
    .from(lockActivity)
    .where(
      and(
        where,
        inArray(lockActivity.type, SDK_AUDIT_LOG_TYPES),
        query.start === undefined ? undefined : gte(lockActivity.at, new Date(query.start * 1000)),
        query.end === undefined ? undefined : lte(lockActivity.at, new Date(query.end * 1000)),
      ),
    )
    .orderBy(desc(lockActivity.at), desc(lockActivity.seq))
    .limit(SDK_AUDIT_MAX_ENTRIES);
  return rows.map(toAuditEntry);
}

/** GET /device/{lockId}/log as the SDK reads it (v2: a list), for the lock's admins. */
export async function lockAudit(db: Db, access: LockAccess, query: { start?: number; end?: number }): Promise<SdkAuditEntry[]> {
  return audit(db, eq(lockActivity.lockId, access.lock.id), query);
}

/** GET /user/{userId}/log: what the user did on the locks the caller administers. */
export async function userAudit(db: Db, user: LockUser, userId: string, query: { start?: number; end?: number }): Promise<SdkAuditEntry[]> {
  const { target, adminLockIds } = await visibleUser(db, user, userId);
  return audit(db, and(eq(lockActivity.actorUserId, target.id), inArray(lockActivity.lockId, adminLockIds)), query);
}
