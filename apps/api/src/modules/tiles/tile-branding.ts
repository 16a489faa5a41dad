import { eq } from 'drizzle-orm';
import { isUuid, tileErrors, type TileBranding } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applications, tiles } from '../../db/schema.js';
import { notFound } from '../../errors.js';

/**
 * The branding of a tile's application, for its public page: the name, logo and colour its emails wear.
 * A tile is printed at a door, so whose door it is is no secret; nothing else of the application is told.
 * An unknown tile is the 404 of a tile with no doors.
 */
export async function getTileBranding(db: Db, tileId: string): Promise<TileBranding> {
  if (!isUuid(tileId)) throw notFound(tileErrors.noDevices);
  const [row] = await db
    .select({ name: applications.name, logoUrl: applications.logoUrl, primaryColour: applications.primaryColour })
    .from(tiles)
    .innerJoin(applications, eq(applications.id, tiles.applicationId))
    .where(eq(tiles.id, tileId.toLowerCase()))
    .limit(1);
  if (!row) throw notFound(tileErrors.noDevices);
  return row;
}
