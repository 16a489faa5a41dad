import * as z from 'zod/mini';
import { GEOFENCE_ACCURACY_M, MAX_TEXT_LENGTH, type Language } from './constants.js';
import { messages } from './messages.js';
import { emailSchema, hexColourSchema, requiredText } from './rules.js';
import { checkText, idParam } from './text.js';
import { epochSeconds, epochSecondsQuery } from './time.js';
import { LOCK_LOG_MAX_PAGE_SIZE, LOCK_UNLOCK_TIME_MAX_S, LOCK_UNLOCK_TIME_MIN_S, lockMessages } from './sandbox-texts.js';
import { deviceErrors } from './device-texts.js';

/**
 * The sandbox's shapes (platform-api.md, "Locks, shares and signed operations"): locks, their settings,
 * shares and activity. Times on the wire are epoch seconds, like `Application.lastUpdated`.
 */
export const DEFAULT_LOCK_NAME = 'Front Door';
/** The sandbox lock's name in the language of whoever created the application. */
export const DEFAULT_LOCK_NAMES: Record<Language, string> = { en: DEFAULT_LOCK_NAME, de: 'Haustür' };
export const DEFAULT_UNLOCK_TIME_S = 5;
export const MAX_TIME_RULES = 10;
export const LOCK_LOG_DEFAULT_PAGE_SIZE = 50;
export const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export const LOCATION_ACCURACIES = ['FINE', 'HIGH', 'MEDIUM', 'LOW'] as const;
export const LOCK_ROLES = ['USER', 'ADMIN'] as const;
export const LOCK_LOG_TYPES = [
  'UNLOCK',
  'LOCK',
  'SHARE',
  'REVOKE',
  'SETTINGS',
  /** An access code created or withdrawn. */
  'ACCESS_CODE',
  /** What the door reported: its sensor, its battery, its alarms, a keypad locked out by wrong codes. */
  'DOOR_OPENED',
  'DOOR_CLOSED',
  'BATTERY',
  'JAMMED',
  'TAMPERED',
  'KEYPAD_LOCKED_OUT',
  /** A device's event chain skipped events or did not follow on from the last one logged. */
  'AUDIT_GAP',
] as const;
/** How an access was made: a signed operation through the cloud or the door's local endpoint, a PIN code, a tile, the portal. */
export const ACCESS_METHODS = ['mobile_key', 'local', 'access_code', 'tile', 'console'] as const;
export type AccessMethod = (typeof ACCESS_METHODS)[number];
/** Who reported an activity entry: the platform deciding, or a device telling what it decided. */
export const ACTIVITY_SOURCES = ['platform', 'device'] as const;
export type ActivitySource = (typeof ACTIVITY_SOURCES)[number];
/** What a door sensor reports. */
export const DOOR_STATES = ['open', 'closed'] as const;
/**
 * A lock's alarms: `jammed` (until the bolt moves again: an unlocked or locked event), `tampered` (raised
 * for good: an owner decides what it means), `low_battery` (a battery level below LOW_BATTERY_LEVEL, until
 * one at or above it).
 */
export const LOCK_ALARMS = ['jammed', 'tampered', 'low_battery'] as const;
export type LockAlarm = (typeof LOCK_ALARMS)[number];
/** A battery report below this is low (device.low_battery, once per crossing). */
export const LOW_BATTERY_LEVEL = 20;
/** A lock's offline grace: how long a device unheard from the platform keeps obeying signed operations. */
export const DEFAULT_OFFLINE_GRACE_S = 7 * 24 * 3600;
export const MIN_OFFLINE_GRACE_S = 60;
export const MAX_OFFLINE_GRACE_S = 30 * 24 * 3600;



/** Whether `zone` is an IANA time zone this runtime knows (Intl throws a RangeError otherwise). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const TIME_OF_DAY_PATTERN = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
export const timeOfDaySchema = z.string({ error: messages.required }).check(z.regex(TIME_OF_DAY_PATTERN, lockMessages.invalidTime));
export const timeZoneSchema = z.string({ error: messages.required }).check(z.refine(isTimeZone, lockMessages.invalidTimeZone));
export const weekdaySchema = z.enum(WEEKDAYS);
export type Weekday = z.infer<typeof weekdaySchema>;

/** One time window: on these days, between start and end in this zone (end before start spans midnight). */
export const timeRuleSchema = z.object({
  start: timeOfDaySchema,
  end: timeOfDaySchema,
  timezone: timeZoneSchema,
  days: z.array(weekdaySchema).check(z.minLength(1, lockMessages.minimumOneDay), z.maxLength(7, lockMessages.minimumOneDay)),
});
export type TimeRule = z.infer<typeof timeRuleSchema>;

export const locationAccuracySchema = z.enum(LOCATION_ACCURACIES);
export type LocationAccuracy = z.infer<typeof locationAccuracySchema>;
/** The location accuracy tiers: the worst accuracy (metres) a reported position may have under each tier. */
export const LOCATION_ACCURACY_LIMIT_M: Record<LocationAccuracy, number> = GEOFENCE_ACCURACY_M;

export const latitudeSchema = z.number({ error: messages.required }).check(z.gte(-90, lockMessages.latitudeRange), z.lte(90, lockMessages.latitudeRange));
export const longitudeSchema = z.number({ error: messages.required }).check(z.gte(-180, lockMessages.longitudeRange), z.lte(180, lockMessages.longitudeRange));

export const locationRuleSchema = z.object({
  latitude: latitudeSchema,
  longitude: longitudeSchema,
  radius: z.number({ error: messages.required }).check(z.gte(1, lockMessages.radiusRange), z.lte(100_000, lockMessages.radiusRange)),
  accuracy: locationAccuracySchema,
  enabled: z.boolean(),
});

export const usageRequirementsSchema = z.object({
  time: z.optional(z.array(timeRuleSchema).check(z.maxLength(MAX_TIME_RULES, messages.tooLong))),
  location: z.nullish(locationRuleSchema),
});
export type UsageRequirements = z.infer<typeof usageRequirementsSchema>;

export const unlockTimeSchema = z
  .number({ error: messages.required })
  .check(
    z.refine(Number.isInteger, lockMessages.unlockTimeRange),
    z.gte(LOCK_UNLOCK_TIME_MIN_S, lockMessages.unlockTimeRange),
    z.lte(LOCK_UNLOCK_TIME_MAX_S, lockMessages.unlockTimeRange),
  );

/** A lock's offline grace (seconds): a whole number from MIN_OFFLINE_GRACE_S to MAX_OFFLINE_GRACE_S. */
export const offlineGraceSchema = z
  .number({ error: lockMessages.offlineGraceRange })
  .check(
    z.refine(Number.isInteger, lockMessages.offlineGraceRange),
    z.gte(MIN_OFFLINE_GRACE_S, lockMessages.offlineGraceRange),
    z.lte(MAX_OFFLINE_GRACE_S, lockMessages.offlineGraceRange),
  );

export const lockSettingsSchema = z.object({ unlockTime: z.number(), usageRequirements: usageRequirementsSchema });

export const lockStateSchema = z.object({
  locked: z.boolean(),
  /** Sandbox locks are always reachable. */
  connected: z.boolean(),
  /** While unlocked: when it locks again, epoch milliseconds (for a countdown); otherwise null. */
  unlockedUntil: z.nullable(z.number()),
});
export type LockState = z.infer<typeof lockStateSchema>;

/** The device a lock is bound to, as the lock list and lock page show it; null: a sandbox (virtual) lock. */
export const lockDeviceSummarySchema = z.object({
  deviceId: z.string(),
  provisioned: z.boolean(),
  connected: z.boolean(),
  /** Epoch seconds; null before the device's first message. */
  lastSeen: z.nullable(z.number()),
  firmware: z.nullable(z.string()),
});
export type LockDeviceSummary = z.infer<typeof lockDeviceSummarySchema>;

export const lockSchema = z.object({
  id: z.string(),
  applicationId: z.string(),
  name: z.string(),
  colour: z.nullable(z.string()),
  settings: lockSettingsSchema,
  state: lockStateSchema,
  createdAt: z.number(),
  device: z.optional(z.nullable(lockDeviceSummarySchema)),
  /** What the door's sensor last said; null: no sensor report yet. */
  door: z.optional(z.nullable(z.enum(DOOR_STATES))),
  /** The last battery level reported, 0–100; null: none reported. */
  battery: z.optional(z.nullable(z.number())),
  /** Alarms raised and not cleared since (LOCK_ALARMS). */
  alarms: z.optional(z.array(z.string())),
  /**
   * How long the lock's device obeys signed operations without hearing from the platform (seconds): past
   * it, a door the internet has lost refuses every phone and keeps obeying access codes.
   */
  offlineGraceSeconds: z.optional(z.number()),
});
export type Lock = z.infer<typeof lockSchema>;

export const createLockSchema = z.object({ name: requiredText(MAX_TEXT_LENGTH), colour: z.nullish(hexColourSchema) });
export type CreateLock = z.infer<typeof createLockSchema>;

export const updateLockSchema = z.object({
  name: z.optional(requiredText(MAX_TEXT_LENGTH)),
  colour: z.nullish(hexColourSchema),
  settings: z.optional(z.object({ unlockTime: z.optional(unlockTimeSchema), usageRequirements: z.optional(usageRequirementsSchema) })),
  /** MIN_OFFLINE_GRACE_S to MAX_OFFLINE_GRACE_S; a change is sent to the lock's device at once. */
  offlineGraceSeconds: z.optional(offlineGraceSchema),
});
export type UpdateLock = z.infer<typeof updateLockSchema>;

export const lockRoleSchema = z.enum(LOCK_ROLES);
export type LockRole = z.infer<typeof lockRoleSchema>;

/** A share as the owner sees it: the user (active or invited by email), role, bounds and time window. */
export const lockShareSchema = z.object({
  userId: z.string(),
  email: z.nullable(z.string()),
  displayName: z.nullable(z.string()),
  /** pending: invited by email, not signed in yet. */
  status: z.enum(['active', 'pending']),
  role: lockRoleSchema,
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
  /** Per-share time window (days, hours, zone); null = any time within start/end. */
  timeWindow: z.nullable(timeRuleSchema),
  /** For an emailed invitation: when it stops being accepted (epoch seconds). */
  inviteExpiresAt: z.nullable(z.number()),
  createdAt: z.number(),
});
export type LockShare = z.infer<typeof lockShareSchema>;

const shareBoundSchema = z.nullish(epochSeconds(lockMessages.timeBoundNumber));

export const createLockShareSchema = z
  .object({
    email: z.optional(emailSchema),
    userId: z.optional(z.uuid({ error: 'Not a valid user id' })),
    role: z._default(lockRoleSchema, 'USER'),
    /** Epoch seconds. */
    start: shareBoundSchema,
    end: shareBoundSchema,
    timeWindow: z.nullish(timeRuleSchema),
  })
  .check(
    z.refine((s) => (s.email === undefined) !== (s.userId === undefined), { message: lockMessages.emailOrUser, path: ['email'] }),
    z.refine((s) => s.start == null || s.end == null || s.end > s.start, { message: lockMessages.endBeforeStart, path: ['end'] }),
  );
export type CreateLockShare = z.infer<typeof createLockShareSchema>;

export const lockLogTypeSchema = z.enum(LOCK_LOG_TYPES);
export const lockLogEntrySchema = z.object({
  id: z.string(),
  lockId: z.string(),
  /** Epoch seconds, with milliseconds as the fraction. */
  timestamp: z.number(),
  type: lockLogTypeSchema,
  actor: z.object({ userId: z.nullable(z.string()), email: z.nullable(z.string()), displayName: z.nullable(z.string()) }),
  subject: z.nullable(z.string()),
  rejected: z.boolean(),
  reason: z.nullable(z.string()),
  /** How an access was made; null for entries that are no access (shares, settings, door reports). */
  method: z.nullable(z.enum(ACCESS_METHODS)),
  /** The access code used (a keypad entry) or concerned; null otherwise. */
  accessCodeId: z.nullable(z.string()),
  /** Who reported it: the platform deciding, or a device telling what it decided (a signed event). */
  source: z.enum(ACTIVITY_SOURCES),
  /** Decided by the door while it could not reach the platform, and delivered later. */
  offline: z.boolean(),
  /** A number the entry carries: the battery level of a BATTERY entry; null otherwise. */
  value: z.nullable(z.number()),
});
export type LockLogEntry = z.infer<typeof lockLogEntrySchema>;

const logBoundQuery = epochSecondsQuery(lockMessages.timeBoundNumber);

export const lockLogQuerySchema = z
  .object({
    /** Epoch seconds, inclusive bounds on the entry's time. */
    start: z.optional(logBoundQuery),
    end: z.optional(logBoundQuery),
    /** Opaque: pass back the previous page's `nextCursor` unchanged. */
    cursor: z.optional(z.string().check(z.maxLength(200, lockMessages.invalidCursor), checkText())),
    pageSize: z.optional(
      z.coerce
        .number({ error: lockMessages.pageSizeRange })
        .check(z.refine(Number.isInteger, lockMessages.pageSizeRange), z.gte(1, lockMessages.pageSizeRange), z.lte(LOCK_LOG_MAX_PAGE_SIZE, lockMessages.pageSizeRange)),
    ),
  })
  .check(
    z.refine((q) => q.start === undefined || q.end === undefined || q.end >= q.start, { message: lockMessages.endBeforeStart, path: ['end'] }),
  );
export type LockLogQuery = z.infer<typeof lockLogQuerySchema>;

export const lockLogPageSchema = z.object({ items: z.array(lockLogEntrySchema), nextCursor: z.nullable(z.string()) });
export type LockLogPage = z.infer<typeof lockLogPageSchema>;

export const lockIdParamsSchema = z.object({ applicationId: idParam(), lockId: idParam() });
export const lockShareParamsSchema = z.object({ applicationId: idParam(), lockId: idParam(), userId: idParam() });

/**
 * What a sandbox (virtual) lock can be made to report, as a door would (`POST …/simulate/{kind}` → 204):
 * its door sensor, a battery level (`{value}`), its alarms, and its presence. `keypad` is the access codes'.
 */
export const SIMULATED_EVENTS = ['door_opened', 'door_closed', 'battery', 'jammed', 'tampered', 'offline', 'online'] as const;
export type SimulatedEvent = (typeof SIMULATED_EVENTS)[number];
export const simulateParamsSchema = z.object({
  applicationId: idParam(),
  lockId: idParam(),
  kind: z.enum(SIMULATED_EVENTS, { error: deviceErrors.simulateUnknown }),
});
/** The body of `…/simulate/battery` (the others take none). */
export const simulateBodySchema = z.nullish(
  z.object({
    value: z.optional(
      z
        .number({ error: deviceErrors.batteryRange })
        .check(z.refine((v) => Number.isInteger(v) && !Object.is(v, -0), deviceErrors.batteryRange), z.gte(0, deviceErrors.batteryRange), z.lte(100, deviceErrors.batteryRange)),
    ),
  }),
);

/**
 * What the Outbox lists: an application's emails (share invitations and notices, the branding test, a tile's
 * sign-in link) and, on a service without SMTP, the signed-in account's own emails (`account-…`).
 */
export const OUTBOX_EMAIL_KINDS = [
  'lock-invitation',
  'lock-share',
  'branding-test',
  'tile-sign-in',
  'account-verify-email',
  'account-key-code',
  'account-passkey-code',
  'account-passkey-added',
] as const;
export type OutboxEmailKind = (typeof OUTBOX_EMAIL_KINDS)[number];

/** The Outbox: what the platform sent for an application (and to the reader's own account), newest first. */
export const OUTBOX_PAGE_SIZE = 100;
export const sentEmailSchema = z.object({
  id: z.string(),
  /** One of OUTBOX_EMAIL_KINDS (a string, so a newer service's kind still reads). */
  kind: z.string(),
  to: z.string(),
  subject: z.string(),
  /** The plain-text part; the rendered HTML is at …/outbox/{emailId}. */
  text: z.string(),
  createdAt: z.number(),
});
export type SentEmail = z.infer<typeof sentEmailSchema>;
export const outboxEmailParamsSchema = z.object({ applicationId: idParam(), emailId: idParam() });
