import * as z from 'zod/mini';
import { MAX_TEXT_LENGTH } from './constants.js';
import { messages } from './messages.js';
import { emailSchema, hexColourSchema, requiredText } from './rules.js';
import { checkText, idParam } from './text.js';
import { epochSecondsQuery } from './time.js';
import { LOCK_LOG_TYPES, latitudeSchema, lockRoleSchema, longitudeSchema, timeRuleSchema, weekdaySchema, MAX_TIME_RULES } from './locks.js';

/**
 * People and lock properties: the calls of the platform's official SDKs (the Kotlin
 * Multiplatform "headless" SDK, `model/requests/LockOperationRequests.kt` and
 * `model/responses/LockOperationResponses.kt`; the archived JavaScript SDK's `deviceOperation.js`) that
 * Latchkey serves, in the shapes those SDKs send and parse. docs/sdk-parity.md lists every call.
 *
 * Times the SDK parses as text (a lock's share `start`/`end`, an audit entry's `timestamp`) are epoch
 * seconds written as a JSON string ("1700000000.123": the SDK reads them with `toDouble()`); those it
 * parses as numbers (a user's `start`/`end`) are epoch seconds.
 */

/** Per lock: at most this many permitted addresses; per batch look-up (v2): 25, the SDK's own bound. */
export const MAX_PERMITTED_ADDRESSES = 100;
export const MAX_BATCH_LOOKUP = 25;
/** Entries of an audit list (GET /device/{id}/log or /user/{id}/log as the SDK reads them): newest first, at most. */
export const SDK_AUDIT_MAX_ENTRIES = 1000;

export const sdkErrors = {
  notAdmin: 'Only an admin of this lock can change its settings or see who it is shared with',
  notAdminOfAny: 'You are not an admin of any lock this user has',
  userNotFound: 'The user has not been found',
  lookupOneKind: 'Send one of email, telephone, localKey, foreignKey or identity',
  batchTooLarge: `At most ${MAX_BATCH_LOOKUP} users per look-up`,
  notAnAddress: 'Not an IP address',
  portalInvite: 'Inviting people by email needs a token of an application user (portal users share from the portal)',
  defaultNameRequired: 'A lock needs a name: send a name, not null',
  addressNotPermitted: 'This lock takes operations only from its permitted addresses',
  nothingToChange: 'Send name, favourite, colour or settings',
} as const;

// --- PUT /device/{lockId} -----------------------------------------------------------------------------

/** An IPv4 or IPv6 address (no ranges), as the SDK's `permittedAddresses` lists them. */
const IP_ADDRESS = z.union([z.ipv4(), z.ipv6()]);
export function isIpAddress(value: string): boolean {
  return IP_ADDRESS.safeParse(value).success;
}
export const permittedAddressSchema = z.string({ error: sdkErrors.notAnAddress }).check(z.trim(), z.maxLength(45, sdkErrors.notAnAddress), z.refine(isIpAddress, sdkErrors.notAnAddress));

/**
 * The SDK's location rule: `accuracy` in metres (an Int), where the portal names a tier; it is stored as
 * the tightest tier that admits it (FINE 10 m, HIGH 20, MEDIUM 100, LOW 500; beyond 500 m is refused).
 */
export const sdkLocationRuleSchema = z.object({
  latitude: latitudeSchema,
  longitude: longitudeSchema,
  enabled: z.boolean({ error: messages.required }),
  radius: z.number({ error: messages.required }).check(z.gte(1, 'Radius must be between 1 and 100000 m'), z.lte(100_000, 'Radius must be between 1 and 100000 m')),
  accuracy: z.number({ error: messages.required }).check(z.gte(0, 'Accuracy must be between 0 and 500 m'), z.lte(500, 'Accuracy must be between 0 and 500 m')),
});
export type SdkLocationRule = z.infer<typeof sdkLocationRuleSchema>;

/** The SDK's time rule: days as a set (kotlinx writes a JSON array). */
const sdkTimeRuleSchema = timeRuleSchema;

/**
 * One body per call (UpdateLockNameRequest, UpdateLockFavouriteRequest, UpdateLockColourRequest,
 * UpdateLockSettingRequest with LockSettingsDefaultNameRequest / LockSettingsPermittedAddressesRequest /
 * LockSettingsHiddenRequest / UpdateLockSettingUsageRequirementRequest). Unknown members — the class
 * discriminator kotlinx may write — are ignored.
 */
export const updateLockPropertiesSchema = z.object({
  /** The caller's own alias; null removes it. */
  name: z.optional(z.nullable(requiredText(MAX_TEXT_LENGTH))),
  favourite: z.optional(z.nullable(z.boolean())),
  /** The caller's own colour; null removes it. */
  colour: z.optional(z.nullable(hexColourSchema)),
  /** Admins only. */
  settings: z.optional(
    z.nullable(
      z.object({
        defaultName: z.optional(z.nullable(requiredText(MAX_TEXT_LENGTH))),
        permittedAddresses: z.optional(z.array(permittedAddressSchema).check(z.maxLength(MAX_PERMITTED_ADDRESSES, messages.tooLong))),
        hidden: z.optional(z.boolean()),
        usageRequirements: z.optional(
          z.nullable(
            z.object({
              time: z.optional(z.array(sdkTimeRuleSchema).check(z.maxLength(MAX_TIME_RULES, messages.tooLong))),
              location: z.optional(z.nullable(sdkLocationRuleSchema)),
            }),
          ),
        ),
      }),
    ),
  ),
});
export type UpdateLockProperties = z.infer<typeof updateLockPropertiesSchema>;

// --- GET /device/{lockId} (v3), /device/favourite: BasicLockResponse --------------------------------------

export const CAPABILITY_TYPES = ['CONFIGURABLE_UNLOCK_DURATION', 'OPEN_HOURS', 'BATCH_SHARING_25'] as const;

const sdkTimeRuleResponse = z.object({ start: z.string(), end: z.string(), timezone: z.string(), days: z.array(weekdaySchema) });
const sdkLocationResponse = z.object({ latitude: z.number(), longitude: z.number(), enabled: z.boolean(), radius: z.number(), accuracy: z.number() });

export const sdkLockSchema = z.object({
  id: z.string(),
  /** The caller's alias, else the lock's (default) name. */
  name: z.string(),
  colour: z.nullable(z.string()),
  start: z.nullable(z.string()),
  end: z.nullable(z.string()),
  role: lockRoleSchema,
  favourite: z.boolean(),
  unlockTime: z.number(),
  settings: z.object({
    unlockTime: z.number(),
    permittedAddresses: z.array(z.string()),
    defaultName: z.string(),
    usageRequirements: z.object({ time: z.array(sdkTimeRuleResponse), location: z.nullable(sdkLocationResponse) }),
    unlockBetweenWindow: z.nullable(z.extend(sdkTimeRuleResponse, { exceptions: z.array(z.string()) })),
    tiles: z.array(z.string()),
    hidden: z.boolean(),
    directAccessEndpoints: z.array(z.string()),
    capabilities: z.record(z.enum(CAPABILITY_TYPES), z.enum(['SUPPORTED', 'UNSUPPORTED'])),
  }),
  state: z.object({ locked: z.boolean(), connected: z.boolean() }),
  /** Epoch seconds of the last message from the lock's device; null for a sandbox lock or before the first. */
  lastSeen: z.optional(z.nullable(z.number())),
});
export type SdkLock = z.infer<typeof sdkLockSchema>;

/** GET /device/shareable: the locks the caller is an admin of. */
export const shareableLockSchema = z.object({ id: z.string(), name: z.string() });

// --- GET /device/{lockId}/users, /user/{userId} ---------------------------------------------------------

const sdkUserBase = {
  userId: z.string(),
  email: z.string(),
  publicKey: z.string(),
  displayName: z.nullable(z.string()),
  /** Invited by email and not signed in yet. */
  orphan: z.boolean(),
  /** Always false: every user here belongs to the caller's application. */
  foreign: z.boolean(),
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
};
export const sdkLockUserSchema = z.object({ ...sdkUserBase, role: lockRoleSchema });
export type SdkLockUser = z.infer<typeof sdkLockUserSchema>;
export const sdkUserLocksSchema = z.object({
  ...sdkUserBase,
  devices: z.array(z.object({ deviceId: z.string(), role: lockRoleSchema, start: z.nullable(z.number()), end: z.nullable(z.number()) })),
});
export type SdkUserLocks = z.infer<typeof sdkUserLocksSchema>;
export const sdkUserParamsSchema = z.object({ userId: idParam() });

// --- Audit (v2): GET /device/{lockId}/log, /user/{userId}/log --------------------------------------------

/**
 * Log types as the headless SDK's AuditEvent enum names them. The SDK decodes that enum strictly, so a type
 * it has no name for (battery, alarms, a keypad lockout, an audit gap: null here) is left out of its audit
 * list rather than sent under a name it would fail on.
 */
export const AUDIT_EVENTS = {
  UNLOCK: 'DOOR_UNLOCK',
  LOCK: 'DOOR_LOCK',
  SHARE: 'LOCK_SHARED',
  REVOKE: 'LOCK_REVOKED',
  SETTINGS: 'SETTING_CHANGED',
  ACCESS_CODE: 'SETTING_CHANGED',
  DOOR_OPENED: 'DOOR_OPEN',
  DOOR_CLOSED: 'DOOR_CLOSE',
  BATTERY: null,
  JAMMED: null,
  TAMPERED: null,
  KEYPAD_LOCKED_OUT: null,
  AUDIT_GAP: null,
} as const satisfies Record<(typeof LOCK_LOG_TYPES)[number], string | null>;
/** The log types the SDK's audit list carries. */
export const SDK_AUDIT_LOG_TYPES = LOCK_LOG_TYPES.filter((type) => AUDIT_EVENTS[type] !== null);
const SDK_AUDIT_NAMES = [...new Set(Object.values(AUDIT_EVENTS).filter((name) => name !== null))] as [string, ...string[]];
const auditUser = z.object({ userId: z.string(), email: z.nullable(z.string()), displayName: z.nullable(z.string()) });
export const sdkAuditEntrySchema = z.object({
  deviceId: z.string(),
  timestamp: z.string(),
  type: z.enum(SDK_AUDIT_NAMES),
  issuer: auditUser,
  subject: z.nullable(auditUser),
  rejectionReason: z.nullable(z.string()),
  rejected: z.boolean(),
});
export type SdkAuditEntry = z.infer<typeof sdkAuditEntrySchema>;
const auditBound = epochSecondsQuery();
export const sdkAuditQuerySchema = z
  .object({ start: z.optional(auditBound), end: z.optional(auditBound) })
  .check(z.refine((q) => q.start === undefined || q.end === undefined || q.end >= q.start, { message: 'The end must be after the start', path: ['end'] }));

// --- Finding people: POST /share/invite/{email}, POST /directory/query -------------------------------------

export const shareInviteParamsSchema = z.object({ email: emailSchema });
export const shareInviteQuerySchema = z.object({ visitor: z.optional(z.enum(['true', 'false'])) });

const lookupText = z.string().check(z.trim(), z.minLength(1, messages.required), z.maxLength(254, messages.tooLong), checkText());
const lookupList = <T extends z.ZodMiniType>(item: T) => z.array(item).check(z.minLength(1, messages.required), z.maxLength(MAX_BATCH_LOOKUP, sdkErrors.batchTooLarge));
const oneOrMany = <T extends z.ZodMiniType>(item: T) => z.optional(z.nullable(z.union([item, lookupList(item)])));
const LOOKUP_KINDS = ['email', 'telephone', 'localKey', 'foreignKey', 'identity'] as const;
/**
 * v1 (UserPublicKeyRequest): one of `email`, `telephone`, `localKey` (the user's id here — the JS SDK's
 * getUser by id sends it), `foreignKey` (the application's own id for the user: its token's `sub`),
 * `identity`; v2 (BatchUserPublicKeyRequest): the same as lists of up to 25. Exactly one kind per call.
 */
export const directoryLookupSchema = z
  .object({
    email: oneOrMany(emailSchema),
    telephone: oneOrMany(lookupText),
    localKey: oneOrMany(lookupText),
    foreignKey: oneOrMany(lookupText),
    identity: z.optional(z.nullable(z.string().check(z.maxLength(8192, messages.tooLong), checkText()))),
  })
  .check(
    z.refine((q) => LOOKUP_KINDS.filter((k) => q[k] != null).length === 1, { message: sdkErrors.lookupOneKind, path: ['email'] }),
  );
export type DirectoryLookup = z.infer<typeof directoryLookupSchema>;

export const userPublicKeySchema = z.object({ id: z.string(), publicKey: z.nullable(z.string()) });
export const batchUserPublicKeySchema = z.object({
  id: z.string(),
  email: z.nullable(z.string()),
  foreignKey: z.nullable(z.string()),
  phone: z.nullable(z.string()),
  publicKey: z.string(),
});
export type BatchUserPublicKey = z.infer<typeof batchUserPublicKeySchema>;
