import { and, eq } from 'drizzle-orm';
import { apiErrors } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { applicationOwners } from '../db/schema.js';
import { notFound } from '../errors.js';

/**
 * Owner-only access: anyone else gets the same 404 as for an application that does not exist, so a
 * non-owner learns nothing, not even that the id is taken.
 */
export async function assertOwner(db: Db, applicationId: string, userId: string): Promise<void> {
  const rows = await db
    .select({ userId: applicationOwners.userId })
    .from(applicationOwners)
    .where(and(eq(applicationOwners.applicationId, applicationId), eq(applicationOwners.userId, userId)))
    .limit(1);
  if (rows.length === 0) throw notFound(apiErrors.applicationNotFound);
}
