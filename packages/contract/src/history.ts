import * as z from 'zod/mini';
import { checkText } from './text.js';

/**
 * An application's change history (platform-api.md, "History and webhooks"): who changed what, when,
 * with the before and after of each changed field. Secrets never appear: they read `REDACTED`.
 */
export const HISTORY_KINDS = [
  'details',
  'urls',
  'branding',
  'logo',
  'key',
  'issuer',
  'cors',
  'owner',
  'lock',
  'lock_settings',
  'share',
  'user',
  'webhook',
  'tile',
  'site',
] as const;
export const historyKindSchema = z.enum(HISTORY_KINDS);
export type HistoryKind = z.infer<typeof historyKindSchema>;

/**
 * Every field the history records (a nested member as `parent.member`): the portal has a label for each.
 * A service that records a new field adds it here.
 */
export const HISTORY_FIELDS = [
  // An application's details, URLs and branding (recorded by the database trigger).
  'name',
  'companyName',
  'mailingAddress',
  'privacyPolicy',
  'supportContact',
  'appLink',
  'logoUrl',
  'emailPreferences.senderEmail',
  'emailPreferences.senderName',
  'emailPreferences.primaryColour',
  'emailPreferences.secondaryColour',
  'emailPreferences.onlySendEssentialEmails',
  'emailPreferences.callToAction',
  'authKeys',
  'authDomains',
  'authDomainDiscovery',
  'corsDomains',
  'owners',
  'users',
  // Locks, their settings (the SDKs' lock properties too), device and shares.
  'colour',
  'device',
  'settings.name',
  'settings.unlockTime',
  'settings.usageRequirements',
  'settings.permittedAddresses',
  'settings.hidden',
  'role',
  'start',
  'end',
  'timeWindow',
  // Webhooks, tiles and sites.
  'url',
  'events',
  'secret',
  'tile',
  'locks',
  'site',
] as const;

/** What a secret's before and after read as, in the database and on the wire. */
export const REDACTED = '[redacted]';
export const HISTORY_PAGE_SIZE = 50;
export const HISTORY_MAX_PAGE_SIZE = 200;

export const historyErrors = {
  invalidCursor: 'The cursor is not valid',
  invalidKind: 'Unknown kind of change',
  invalidActor: 'The actor must be a user id or an email address',
  pageSizeRange: `pageSize must be a whole number from 1 to 200`,
} as const;

export const fieldChangeSchema = z.object({
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
export type FieldChange = z.infer<typeof fieldChangeSchema>;

export const historyEntrySchema = z.object({
  id: z.string(),
  /** Epoch seconds, with the milliseconds as the fraction. */
  at: z.number(),
  actor: z.object({ userId: z.nullable(z.string()), email: z.nullable(z.string()) }),
  kind: historyKindSchema,
  /** What the entry is about beyond the application: a lock's name, a share's user, a webhook's URL … */
  subject: z.nullable(z.string()),
  changes: z.array(fieldChangeSchema),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

export const historyPageSchema = z.object({ items: z.array(historyEntrySchema), nextCursor: z.nullable(z.string()) });
export type HistoryPage = z.infer<typeof historyPageSchema>;

export const historyQuerySchema = z.object({
  kind: z.optional(z.enum(HISTORY_KINDS, { error: historyErrors.invalidKind })),
  /** A user id, or an email (case-insensitive). */
  actor: z.optional(z.string().check(z.trim(), z.minLength(1, historyErrors.invalidActor), z.maxLength(320, historyErrors.invalidActor), checkText())),
  /** Opaque: the previous page's `nextCursor`, unchanged. */
  cursor: z.optional(z.string().check(z.maxLength(200, historyErrors.invalidCursor), checkText())),
  pageSize: z.optional(
    z.coerce
      .number({ error: historyErrors.pageSizeRange })
      .check(z.refine(Number.isInteger, historyErrors.pageSizeRange), z.gte(1, historyErrors.pageSizeRange), z.lte(HISTORY_MAX_PAGE_SIZE, historyErrors.pageSizeRange)),
  ),
});
export type HistoryQuery = z.infer<typeof historyQuerySchema>;

/**
 * Everyone who appears in an application's history (`GET …/history/actors`), most recent first: the
 * choices of the actor filter, former owners included. `userId` or else `email` is what `?actor=` takes.
 */
export const historyActorSchema = z.object({ userId: z.nullable(z.string()), email: z.nullable(z.string()) });
export type HistoryActor = z.infer<typeof historyActorSchema>;
/** At most this many actors are listed (the most recent). */
export const HISTORY_MAX_ACTORS = 200;
