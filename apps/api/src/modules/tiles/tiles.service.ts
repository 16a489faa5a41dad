import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import QRCode from 'qrcode';
import {
  isUuid,
  lockErrors,
  MAX_LOCKS_PER_TILE,
  MAX_TILES_PER_LOCK,
  siteErrors,
  tileErrors,
  type AssociateTile,
  type Lock,
  type LockTile,
  type TileLocks,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationOwners, locks, lockShares, siteLocks, sites, tileLocks, tiles } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { diff, recordChange, type ChangeActor } from '../history/history.service.js';
import { getLockAccess } from '../operations/devices.service.js';
import { getLockRow, toLock } from '../locks/locks.service.js';

/**
 * Tiles: a tile is the code at a door that a phone reads to find its locks. It belongs to the
 * application whose lock it was first linked to; linking it to a lock of another application is a 409,
 * and nothing about another application's locks is ever answered.
 */

const tileNotFound = () => notFound(tileErrors.noDevices);

/**
 * The tile's locks the caller may use, oldest link first: for a portal user the locks of applications
 * they own; for an application user, in their own application only, the locks shared with them whose
 * share has not ended. None (an unknown tile, another application's, nothing shared) is the same 404.
 */
async function usableTileLocks(db: Db, user: LockUser, tileId: string) {
  if (!isUuid(tileId)) return null;
  const base = db
    .select({ siteId: tiles.siteId, applicationId: tiles.applicationId, lockId: tileLocks.lockId })
    .from(tiles)
    .innerJoin(tileLocks, eq(tileLocks.tileId, tiles.id));
  const rows =
    user.kind === 'portal'
      ? await base
          .innerJoin(applicationOwners, and(eq(applicationOwners.applicationId, tiles.applicationId), eq(applicationOwners.userId, user.id)))
          .where(eq(tiles.id, tileId))
          .orderBy(asc(tileLocks.createdAt), asc(tileLocks.lockId))
      : await base
          .innerJoin(lockShares, and(eq(lockShares.lockId, tileLocks.lockId), eq(lockShares.userId, user.id)))
          .where(and(eq(tiles.id, tileId), eq(tiles.applicationId, user.applicationId!), or(isNull(lockShares.endsAt), gt(lockShares.endsAt, sql`now()`))))
          .orderBy(asc(tileLocks.createdAt), asc(tileLocks.lockId));
  return rows.length > 0 ? rows : null;
}

/** GET /tile/{tileId}. `siteId` is the site the tile was associated under, or its application when none. */
export async function getTileLocks(db: Db, user: LockUser, tileId: string): Promise<TileLocks> {
  const rows = await usableTileLocks(db, user, tileId);
  if (!rows) throw tileNotFound();
  const first = rows[0]!;
  return { siteId: first.siteId ?? first.applicationId, tileId: tileId.toLowerCase(), deviceIds: rows.map((r) => r.lockId) };
}

/** GET /tile/{tileId}/lock: the same locks in the portal's Lock shape, for the tile page's Unlock. */
export async function getTileLockDetails(db: Db, user: LockUser, tileId: string): Promise<Lock[]> {
  const rows = await usableTileLocks(db, user, tileId);
  if (!rows) throw tileNotFound();
  const ids = rows.map((r) => r.lockId);
  const found = await db.select().from(locks).where(inArray(locks.id, ids));
  const byId = new Map(found.map((l) => [l.id, l]));
  const now = Date.now();
  return ids.flatMap((id) => (byId.has(id) ? [toLock(byId.get(id)!, now)] : []));
}

/** One transaction per tile at a time: links, limits and the owning application are read and written together. */
async function holdTile(tx: Db, tileId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`tile:${tileId}`}))`);
  const [tile] = await tx.select().from(tiles).where(eq(tiles.id, tileId)).limit(1);
  return tile ?? null;
}

/**
 * What the history records of a tile (kind `tile`, its id the subject): the names of the locks it opens,
 * oldest link first (null for none), and the site it was associated under.
 */
async function tileState(tx: Db, tileId: string) {
  const [tile] = await tx
    .select({ site: sites.name })
    .from(tiles)
    .leftJoin(sites, eq(sites.id, tiles.siteId))
    .where(eq(tiles.id, tileId))
    .limit(1);
  const names = await tx
    .select({ name: locks.name })
    .from(tileLocks)
    .innerJoin(locks, eq(locks.id, tileLocks.lockId))
    .where(eq(tileLocks.tileId, tileId))
    .orderBy(asc(tileLocks.createdAt), asc(tileLocks.lockId));
  return { locks: names.length > 0 ? names.map((n) => n.name) : null, site: tile?.site ?? null };
}

/** Records a change to a tile, in the transaction that made it: `before` is null for a tile it created. */
async function recordTile(tx: Db, applicationId: string, tileId: string, by: ChangeActor, before: Awaited<ReturnType<typeof tileState>> | null) {
  const after = await tileState(tx, tileId);
  const created = before === null ? [{ field: 'tile', before: null, after: tileId }] : [];
  await recordChange(tx, { applicationId, actor: by, kind: 'tile', subject: tileId, changes: [...created, ...diff(before ?? { locks: null, site: null }, after)] });
}

/** Who changes a tile through the SDKs: the lock user, as the history names them. */
export const lockUserActor = (user: LockUser): ChangeActor => ({ id: user.id, email: user.email });

async function assertRoomForTile(tx: Db, lockId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`lock-tiles:${lockId}`}))`);
  const [row] = await tx.select({ n: count() }).from(tileLocks).where(eq(tileLocks.lockId, lockId));
  if ((row?.n ?? 0) >= MAX_TILES_PER_LOCK) throw conflict(tileErrors.tooManyTiles);
}

/**
 * Links one tile to one lock of `applicationId` (the lock is checked by the caller). A tile of another
 * application is a 409, so is a link that exists already; the lock's and the tile's limits are 409s.
 */
export async function linkTile(db: Db, applicationId: string, lockId: string, tileId: string, by: ChangeActor): Promise<void> {
  if (!isUuid(tileId)) throw badRequest(tileErrors.tileIdInvalid);
  const id = tileId.toLowerCase();
  await db.transaction(async (tx) => {
    const tile = await holdTile(tx, id);
    if (tile && tile.applicationId !== applicationId) throw conflict(tileErrors.otherApplication);
    const before = tile ? await tileState(tx, id) : null;
    if (!tile) await tx.insert(tiles).values({ id, applicationId });
    const [linked] = await tx
      .select({ n: count() })
      .from(tileLocks)
      .where(and(eq(tileLocks.tileId, id), eq(tileLocks.lockId, lockId)));
    if ((linked?.n ?? 0) > 0) throw conflict(tileErrors.alreadyLinked);
    const [onTile] = await tx.select({ n: count() }).from(tileLocks).where(eq(tileLocks.tileId, id));
    if ((onTile?.n ?? 0) >= MAX_LOCKS_PER_TILE) throw conflict(tileErrors.tooManyLocks);
    await assertRoomForTile(tx, lockId);
    await tx.insert(tileLocks).values({ tileId: id, lockId, createdAt: sql`clock_timestamp()` });
    await recordTile(tx, applicationId, id, by, before);
  });
}

/** Removes one link; a link that is not there is a 404. The tile stays its application's. */
export async function unlinkTile(db: Db, applicationId: string, lockId: string, tileId: string, by: ChangeActor): Promise<void> {
  if (!isUuid(tileId)) throw badRequest(tileErrors.tileIdInvalid);
  const id = tileId.toLowerCase();
  await db.transaction(async (tx) => {
    await holdTile(tx, id);
    const before = await tileState(tx, id);
    const removed = await tx
      .delete(tileLocks)
      .where(and(eq(tileLocks.tileId, id), eq(tileLocks.lockId, lockId)))
      .returning({ lockId: tileLocks.lockId });
    if (removed.length === 0) throw notFound(tileErrors.notLinked);
    await recordTile(tx, applicationId, id, by, before);
  });
}

/**
 * A lock the caller administers (owners of its application, or an ADMIN share that has begun and not
 * ended); 404 if they cannot see it.
 */
export async function adminLock(db: Db, user: LockUser, lockId: string) {
  const access = await getLockAccess(db, user, lockId);
  if (!access?.role) throw notFound(lockErrors.lockNotFound);
  const now = Date.now();
  const inForce = (access.terms.start === null || access.terms.start <= now) && (access.terms.end === null || access.terms.end > now);
  if (access.role !== 'ADMIN' || !inForce) throw new AppError(403, tileErrors.notAdmin);
  return access.lock;
}

/**
 * PUT /tile/{tileId} (the SDK's associateMultipleLocks): afterwards the tile opens exactly `devices`. The
 * site is a site of the caller's application, or the application's own id (what GET answers for a tile
 * in no site). Every lock, listed or being removed, must be one the caller administers; in a real site,
 * every listed lock must be in it. An empty list clears a tile of the application; for any other tile it
 * is the 404 of an unknown tile. Any refusal changes nothing.
 */
export async function associateTile(db: Db, user: LockUser, tileId: string, input: AssociateTile): Promise<void> {
  if (!isUuid(tileId)) throw badRequest(tileErrors.tileIdInvalid);
  const id = tileId.toLowerCase();
  const devices = input.devices.map((d) => d.toLowerCase());
  if (new Set(devices).size !== devices.length) throw badRequest(tileErrors.duplicateLock);
  const siteId = input.siteId.toLowerCase();
  const applicationId = await siteApplication(db, user, siteId);
  const [realSite] = await db.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).limit(1);
  for (const lockId of devices) {
    const lock = await adminLock(db, user, lockId);
    if (lock.applicationId !== applicationId) throw notFound(lockErrors.lockNotFound);
  }
  if (realSite && devices.length > 0) {
    const inSite = await db
      .select({ lockId: siteLocks.lockId })
      .from(siteLocks)
      .where(and(eq(siteLocks.siteId, siteId), inArray(siteLocks.lockId, devices)));
    if (inSite.length !== devices.length) throw conflict(tileErrors.lockNotInSite);
  }
  const [existing] = await db.select({ applicationId: tiles.applicationId }).from(tiles).where(eq(tiles.id, id)).limit(1);
  const own = existing?.applicationId === applicationId;
  // No lock named: nothing to link, and a tile that is not the application's is answered as an unknown one
  // (another application's tile is not revealed, and no empty tile is claimed).
  if (devices.length === 0 && !own) throw tileNotFound();
  // An admin naming locks of theirs learns only that the tile is taken: it cannot be two applications'.
  if (existing && !own) throw conflict(tileErrors.otherApplication);
  // Links this call would remove: the caller must administer those locks too (read before, removed by name).
  const before = (await db.select({ lockId: tileLocks.lockId }).from(tileLocks).where(eq(tileLocks.tileId, id))).map((r) => r.lockId);
  const removing = before.filter((l) => !devices.includes(l));
  for (const lockId of removing) await adminLock(db, user, lockId);
  await db.transaction(async (tx) => {
    const tile = await holdTile(tx, id);
    if (tile && tile.applicationId !== applicationId) throw conflict(tileErrors.otherApplication);
    const before = tile ? await tileState(tx, id) : null;
    if (!tile) await tx.insert(tiles).values({ id, applicationId, siteId: realSite ? siteId : null });
    else await tx.update(tiles).set({ siteId: realSite ? siteId : null }).where(eq(tiles.id, id));
    if (removing.length > 0) await tx.delete(tileLocks).where(and(eq(tileLocks.tileId, id), inArray(tileLocks.lockId, removing)));
    const current = (await tx.select({ lockId: tileLocks.lockId }).from(tileLocks).where(eq(tileLocks.tileId, id))).map((r) => r.lockId);
    const adding = devices.filter((l) => !current.includes(l));
    if (current.length + adding.length > MAX_LOCKS_PER_TILE) throw conflict(tileErrors.tooManyLocks);
    for (const lockId of adding) {
      await assertRoomForTile(tx, lockId);
      await tx.insert(tileLocks).values({ tileId: id, lockId, createdAt: sql`clock_timestamp()` });
    }
    await recordTile(tx, applicationId, id, lockUserActor(user), before);
  });
}

/**
 * The application a site id stands for, if the caller may use it: a site of an application they own
 * (portal users) or of their own application (application users), or that application's own id.
 */
async function siteApplication(db: Db, user: LockUser, siteId: string): Promise<string> {
  const [site] = await db.select({ applicationId: sites.applicationId }).from(sites).where(eq(sites.id, siteId)).limit(1);
  const applicationId = site?.applicationId ?? siteId;
  if (user.kind === 'application') {
    if (applicationId === user.applicationId) return applicationId;
  } else {
    const [owned] = await db
      .select({ id: applicationOwners.applicationId })
      .from(applicationOwners)
      .where(and(eq(applicationOwners.applicationId, applicationId), eq(applicationOwners.userId, user.id)))
      .limit(1);
    if (owned) return applicationId;
  }
  throw notFound(siteErrors.siteNotFound);
}

/** The short URL a tile's QR code carries: the portal's tile page. */
export const tileUrl = (publicUrl: string, tileId: string) => `${publicUrl.replace(/\/+$/, '')}/t/${tileId}`;

/** The owner's lock page: the lock's tiles, oldest first, with the other locks each one opens. */
export async function listLockTiles(db: Db, applicationId: string, lockId: string, publicUrl: string): Promise<LockTile[]> {
  await getLockRow(db, applicationId, lockId);
  const own = await db
    .select({ tileId: tileLocks.tileId, name: tiles.name, createdAt: tileLocks.createdAt })
    .from(tileLocks)
    .innerJoin(tiles, eq(tiles.id, tileLocks.tileId))
    .where(eq(tileLocks.lockId, lockId))
    .orderBy(asc(tileLocks.createdAt), asc(tileLocks.tileId));
  if (own.length === 0) return [];
  const all = await db
    .select({ tileId: tileLocks.tileId, lockId: tileLocks.lockId })
    .from(tileLocks)
    .where(inArray(tileLocks.tileId, own.map((t) => t.tileId)))
    .orderBy(asc(tileLocks.createdAt));
  return own.map((t) => ({
    tileId: t.tileId,
    name: t.name,
    url: tileUrl(publicUrl, t.tileId),
    otherLockIds: all.filter((r) => r.tileId === t.tileId && r.lockId !== lockId).map((r) => r.lockId),
    createdAt: Math.floor(t.createdAt.getTime() / 1000),
  }));
}

/** A new tile (a fresh UUID) for one of the application's locks. */
export async function createLockTile(db: Db, applicationId: string, lockId: string, publicUrl: string, by: ChangeActor): Promise<LockTile> {
  await getLockRow(db, applicationId, lockId);
  const tileId = randomUUID();
  await linkTile(db, applicationId, lockId, tileId, by);
  return { tileId, name: null, url: tileUrl(publicUrl, tileId), otherLockIds: [], createdAt: Math.floor(Date.now() / 1000) };
}

export async function deleteLockTile(db: Db, applicationId: string, lockId: string, tileId: string, by: ChangeActor): Promise<void> {
  await getLockRow(db, applicationId, lockId);
  if (!isUuid(tileId)) throw notFound(tileErrors.notLinked);
  await unlinkTile(db, applicationId, lockId, tileId, by);
}

/** The printable QR code of a tile linked to this lock: an SVG of its short URL. */
export async function tileQrSvg(db: Db, applicationId: string, lockId: string, tileId: string, publicUrl: string): Promise<string> {
  await getLockRow(db, applicationId, lockId);
  if (!isUuid(tileId)) throw notFound(tileErrors.notLinked);
  const [linked] = await db
    .select({ n: count() })
    .from(tileLocks)
    .where(and(eq(tileLocks.tileId, tileId.toLowerCase()), eq(tileLocks.lockId, lockId)));
  if ((linked?.n ?? 0) === 0) throw notFound(tileErrors.notLinked);
  return QRCode.toString(tileUrl(publicUrl, tileId.toLowerCase()), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
