import { and, asc, count, eq, gt, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import {
  DEFAULT_SITE_COLOUR,
  isUuid,
  MAX_SITES_PER_APPLICATION,
  siteErrors,
  type DeviceLock,
  type FieldChange,
  type OwnerSite,
  type Site,
  type SiteName,
  type SiteUser,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationOwners, applicationUsers, locks, lockShares, siteLocks, sites } from '../../db/schema.js';
import { conflict, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { listDeviceLocks } from '../operations/devices.service.js';
import { diff, recordChange, type ChangeActor } from '../history/history.service.js';
import { getLockRow } from '../locks/locks.service.js';
import { isUniqueViolation } from '../../lib/unique-violation.js';

/**
 * Sites: an application's locks grouped by building. Owners make, rename and remove them and
 * move locks between them; lock users read them as the SDK's SitesClient does: the sites of their locks,
 * a site's locks they may use, and (for the locks they administer) the people who share them.
 */
type SiteRow = typeof sites.$inferSelect;

export function toSite(row: SiteRow): Site {
  return {
    id: row.id,
    name: row.name,
    colour: DEFAULT_SITE_COLOUR,
    longitude: 0,
    latitude: 0,
    radius: 0,
    passBackground: DEFAULT_SITE_COLOUR,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

const siteNotFound = () => notFound(siteErrors.siteNotFound);
const activeShare = or(isNull(lockShares.endsAt), gt(lockShares.endsAt, sql`now()`));

/** The sites the caller sees: of the applications they own, or (application users) those holding a lock shared with them. */
async function visibleSites(db: Db, user: LockUser, siteId?: string): Promise<SiteRow[]> {
  if (siteId !== undefined && !isUuid(siteId)) return [];
  const one = siteId === undefined ? undefined : eq(sites.id, siteId.toLowerCase());
  if (user.kind === 'portal') {
    const rows = await db
      .select({ site: sites })
      .from(sites)
      .innerJoin(applicationOwners, and(eq(applicationOwners.applicationId, sites.applicationId), eq(applicationOwners.userId, user.id)))
      .where(one)
      .orderBy(asc(sites.createdAt), asc(sites.id));
    return rows.map((r) => r.site);
  }
  const rows = await db
    .selectDistinct({ site: sites })
    .from(sites)
    .innerJoin(siteLocks, eq(siteLocks.siteId, sites.id))
    .innerJoin(lockShares, and(eq(lockShares.lockId, siteLocks.lockId), eq(lockShares.userId, user.id), activeShare))
    .where(and(eq(sites.applicationId, user.applicationId!), one))
    .orderBy(asc(sites.createdAt), asc(sites.id));
  return rows.map((r) => r.site);
}

/** GET /site */
export async function listSites(db: Db, user: LockUser): Promise<Site[]> {
  return (await visibleSites(db, user)).map(toSite);
}

async function visibleSite(db: Db, user: LockUser, siteId: string): Promise<SiteRow> {
  const [site] = await visibleSites(db, user, siteId);
  if (!site) throw siteNotFound();
  return site;
}

async function lockIdsOf(db: Db, siteId: string): Promise<string[]> {
  return (await db.select({ lockId: siteLocks.lockId }).from(siteLocks).where(eq(siteLocks.siteId, siteId))).map((r) => r.lockId);
}

/** GET /site/{siteId}/device: the site's locks the caller may use, in the shape of GET /device/mine. */
export async function listSiteDevices(db: Db, user: LockUser, siteId: string): Promise<DeviceLock[]> {
  const site = await visibleSite(db, user, siteId);
  const inSite = new Set(await lockIdsOf(db, site.id));
  return (await listDeviceLocks(db, user)).filter((l) => inSite.has(l.id));
}

/**
 * GET /site/{siteId}/user: everyone with a share of a lock in the site that the caller administers
 * (owners: every lock of the site; application users: the locks they hold an ADMIN share of).
 */
export async function listSiteUsers(db: Db, user: LockUser, siteId: string): Promise<SiteUser[]> {
  const site = await visibleSite(db, user, siteId);
  let lockIds = await lockIdsOf(db, site.id);
  if (user.kind === 'application' && lockIds.length > 0) {
    const admin = await db
      .select({ lockId: lockShares.lockId })
      .from(lockShares)
      .where(and(eq(lockShares.userId, user.id), eq(lockShares.role, 'ADMIN'), inArray(lockShares.lockId, lockIds), activeShare));
    lockIds = admin.map((r) => r.lockId);
  }
  if (lockIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ id: applicationUsers.id, email: applicationUsers.email, displayName: applicationUsers.displayName, status: applicationUsers.status, createdAt: applicationUsers.createdAt })
    .from(lockShares)
    .innerJoin(applicationUsers, eq(applicationUsers.id, lockShares.userId))
    .where(inArray(lockShares.lockId, lockIds))
    .orderBy(asc(applicationUsers.createdAt), asc(applicationUsers.id));
  return rows.map((r) => ({ userId: r.id, email: r.email ?? '', displayName: r.displayName, orphan: r.status === 'pending' }));
}

// The owner's side: /platform/application/{applicationId}/site…

export async function listOwnerSites(db: Db, applicationId: string): Promise<OwnerSite[]> {
  const rows = await db.select().from(sites).where(eq(sites.applicationId, applicationId)).orderBy(asc(sites.createdAt), asc(sites.id));
  if (rows.length === 0) return [];
  const members = await db
    .select({ siteId: siteLocks.siteId, lockId: siteLocks.lockId })
    .from(siteLocks)
    .where(inArray(siteLocks.siteId, rows.map((r) => r.id)));
  return rows.map((r) => ({ ...toSite(r), lockIds: members.filter((m) => m.siteId === r.id).map((m) => m.lockId) }));
}

async function ownerSiteRow(db: Db, applicationId: string, siteId: string): Promise<SiteRow> {
  if (!isUuid(siteId)) throw siteNotFound();
  const [row] = await db
    .select()
    .from(sites)
    .where(and(eq(sites.id, siteId.toLowerCase()), eq(sites.applicationId, applicationId)))
    .limit(1);
  if (!row) throw siteNotFound();
  return row;
}

async function assertNameFree(db: Db, applicationId: string, name: string, except?: string) {
  const [taken] = await db
    .select({ id: sites.id })
    .from(sites)
    .where(and(eq(sites.applicationId, applicationId), sql`lower(${sites.name}) = lower(${name})`, except ? ne(sites.id, except) : undefined))
    .limit(1);
  if (taken) throw conflict(siteErrors.nameTaken);
}

export async function createSite(db: Db, applicationId: string, input: SiteName, by: ChangeActor): Promise<OwnerSite> {
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`sites:${applicationId}`}))`);
      const [existing] = await tx.select({ n: count() }).from(sites).where(eq(sites.applicationId, applicationId));
      if ((existing?.n ?? 0) >= MAX_SITES_PER_APPLICATION) throw conflict(siteErrors.tooManySites);
      await assertNameFree(tx, applicationId, input.name);
      const [row] = await tx.insert(sites).values({ applicationId, name: input.name }).returning();
      await recordChange(tx, { applicationId, actor: by, kind: 'site', subject: row!.name, changes: [{ field: 'name', before: null, after: row!.name }] });
      return { ...toSite(row!), lockIds: [] };
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(siteErrors.nameTaken);
    throw e;
  }
}

export async function renameSite(db: Db, applicationId: string, siteId: string, input: SiteName, by: ChangeActor): Promise<OwnerSite> {
  const found = await ownerSiteRow(db, applicationId, siteId);
  await assertNameFree(db, applicationId, input.name, found.id);
  try {
    return await db.transaction(async (tx) => {
      const [before] = await tx
        .select({ name: sites.name })
        .from(sites)
        .where(and(eq(sites.id, found.id), eq(sites.applicationId, applicationId)))
        .for('update');
      if (!before) throw siteNotFound();
      const [row] = await tx
        .update(sites)
        .set({ name: input.name, updatedAt: sql`now()` })
        .where(and(eq(sites.id, found.id), eq(sites.applicationId, applicationId)))
        .returning();
      if (!row) throw siteNotFound();
      await recordChange(tx, { applicationId, actor: by, kind: 'site', subject: row.name, changes: diff(before, { name: row.name }) });
      return { ...toSite(row), lockIds: await lockIdsOf(tx, row.id) };
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(siteErrors.nameTaken);
    throw e;
  }
}

/** Removes the site; its locks stay, in no site. */
export async function deleteSite(db: Db, applicationId: string, siteId: string, by: ChangeActor): Promise<void> {
  if (!isUuid(siteId)) throw siteNotFound();
  const id = siteId.toLowerCase();
  await db.transaction(async (tx) => {
    const [site] = await tx
      .select({ name: sites.name })
      .from(sites)
      .where(and(eq(sites.id, id), eq(sites.applicationId, applicationId)))
      .for('update');
    if (!site) throw siteNotFound();
    const members = await tx
      .select({ name: locks.name })
      .from(siteLocks)
      .innerJoin(locks, eq(locks.id, siteLocks.lockId))
      .where(eq(siteLocks.siteId, id))
      .orderBy(asc(locks.name));
    await tx.delete(sites).where(and(eq(sites.id, id), eq(sites.applicationId, applicationId)));
    const changes: FieldChange[] = [{ field: 'name', before: site.name, after: null }];
    if (members.length > 0) changes.push({ field: 'locks', before: members.map((m) => m.name), after: null });
    await recordChange(tx, { applicationId, actor: by, kind: 'site', subject: site.name, changes });
  });
}

/** The name of the site a lock is in (null for none), its row held until the transaction ends. */
async function siteNameOfLock(tx: Db, lockId: string): Promise<string | null> {
  const [row] = await tx
    .select({ name: sites.name })
    .from(siteLocks)
    .innerJoin(sites, eq(sites.id, siteLocks.siteId))
    .where(eq(siteLocks.lockId, lockId))
    .for('update', { of: siteLocks });
  return row?.name ?? null;
}

/** Moves a lock into a site of its application, or (null) out of every site; recorded as the lock's site (kind `site`). */
export async function setLockSite(db: Db, applicationId: string, lockId: string, siteId: string | null, by: ChangeActor): Promise<void> {
  const lock = await getLockRow(db, applicationId, lockId);
  const site = siteId === null ? null : await ownerSiteRow(db, applicationId, siteId);
  await db.transaction(async (tx) => {
    const before = await siteNameOfLock(tx, lock.id);
    if (site === null) {
      await tx.delete(siteLocks).where(eq(siteLocks.lockId, lock.id));
    } else {
      await tx
        .insert(siteLocks)
        .values({ lockId: lock.id, siteId: site.id })
        .onConflictDoUpdate({ target: siteLocks.lockId, set: { siteId: site.id } });
      await tx.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, site.id));
    }
    await recordChange(tx, { applicationId, actor: by, kind: 'site', subject: lock.name, changes: diff({ site: before }, { site: await siteNameOfLock(tx, lock.id) }) });
  });
}
