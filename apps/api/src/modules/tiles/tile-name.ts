import { and, eq } from 'drizzle-orm';
import { isUuid, tileErrors, type LockTile, type TileName } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { tileLocks, tiles } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { recordChange, type ChangeActor } from '../history/history.service.js';
import { getLockRow } from '../locks/locks.service.js';
import { listLockTiles } from './tiles.service.js';

/**
 * Names (or unnames, null) a tile of one of the application's locks, so its owners can tell their
 * stickers apart; the history records the old and new name. A tile not on this lock is a 404.
 */
export async function renameLockTile(db: Db, applicationId: string, lockId: string, tileId: string, input: TileName, publicUrl: string, by: ChangeActor): Promise<LockTile> {
  await getLockRow(db, applicationId, lockId);
  if (!isUuid(tileId)) throw notFound(tileErrors.notLinked);
  const id = tileId.toLowerCase();
  await db.transaction(async (tx) => {
    const [tile] = await tx
      .select({ name: tiles.name })
      .from(tiles)
      .innerJoin(tileLocks, and(eq(tileLocks.tileId, tiles.id), eq(tileLocks.lockId, lockId)))
      .where(and(eq(tiles.id, id), eq(tiles.applicationId, applicationId)))
      .for('update', { of: tiles })
      .limit(1);
    if (!tile) throw notFound(tileErrors.notLinked);
    if (tile.name === input.name) return;
    await tx.update(tiles).set({ name: input.name }).where(eq(tiles.id, id));
    await recordChange(tx, { applicationId, actor: by, kind: 'tile', subject: id, changes: [{ field: 'name', before: tile.name, after: input.name }] });
  });
  const listed = await listLockTiles(db, applicationId, lockId, publicUrl);
  const renamed = listed.find((t) => t.tileId === id);
  if (!renamed) throw notFound(tileErrors.notLinked);
  return renamed;
}
