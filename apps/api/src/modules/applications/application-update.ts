import { eq, sql } from 'drizzle-orm';
import type { HistoryKind } from '@latchkey/contract';
import { affectedRows, type Db } from '../../db/client.js';
import { applications } from '../../db/schema.js';
import type { ChangeActor } from '../history/history.service.js';

type Columns = Partial<typeof applications.$inferInsert>;

/**
 * Each column's field name on the wire and the kind of change it belongs to in the history. The history
 * trigger (migration 0008) records exactly these; history.test.ts holds the two together.
 */
export const historyFields: Record<string, [field: string, kind: HistoryKind]> = {
  name: ['name', 'details'],
  companyName: ['companyName', 'details'],
  mailingAddress: ['mailingAddress', 'details'],
  privacyPolicy: ['privacyPolicy', 'urls'],
  supportContact: ['supportContact', 'urls'],
  appLink: ['appLink', 'urls'],
  logoUrl: ['logoUrl', 'logo'],
  senderEmail: ['emailPreferences.senderEmail', 'branding'],
  senderName: ['emailPreferences.senderName', 'branding'],
  primaryColour: ['emailPreferences.primaryColour', 'branding'],
  secondaryColour: ['emailPreferences.secondaryColour', 'branding'],
  onlySendEssentialEmails: ['emailPreferences.onlySendEssentialEmails', 'branding'],
  callToAction: ['emailPreferences.callToAction', 'branding'],
};

/**
 * The application update: one UPDATE that names its actor. The database's history trigger (migration
 * 0008) writes, in the same statement, one history entry per kind of change with the before/after of
 * each changed column, and queues application.updated for every subscribed webhook; so the entry and
 * the event commit with the change or not at all, and no update of these columns goes unrecorded.
 * Recording history may add at most 10 % to an update's p50 (bench/history-overhead.ts): the trigger's
 * statements are planned once per connection, where the one-statement CTE this replaces was planned on
 * every update. Answers whether
 * the application exists.
 */
export async function updateWithHistory(db: Db, applicationId: string, set: Columns, by: ChangeActor): Promise<boolean> {
  const result = await db
    .update(applications)
    .set({ ...set, version: sql`${applications.version} + 1`, updatedAt: sql`now()`, changeActorId: by.id, changeActorEmail: by.email })
    .where(eq(applications.id, applicationId));
  return affectedRows(result) > 0;
}
