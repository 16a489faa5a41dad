import * as z from 'zod/mini';
import { messages } from './messages.js';
import { checkText, idParam } from './text.js';
import { epochSeconds, isEpochSeconds } from './time.js';
import { LOCK_UNLOCK_TIME_MAX_S, LOCK_UNLOCK_TIME_MIN_S, operationErrors } from './sandbox-texts.js';
import {
  latitudeSchema,
  lockRoleSchema,
  lockSettingsSchema,
  lockStateSchema,
  longitudeSchema,
  timeRuleSchema,
} from './locks.js';

/**
 * The lock user's side of the sandbox (platform-api.md, "Locks, shares and signed operations"): the
 * certificate of an ephemeral key, the locks shared with the caller, and the signed operations sent to
 * POST /device/{lockId}/execute. Times on the wire are epoch seconds.
 */

/** Clock skew allowed on an operation's nbf / iat / exp. */
export const OPERATION_CLOCK_SKEW_S = 5;
/** Lifetime of a leaf certificate from POST /auth/certificate. */
export const CERTIFICATE_LIFETIME_DAYS = 30;
/** What the platform's SDKs require of a leaf before they re-register their key. */
export const CERTIFICATE_MIN_REMAINING_DAYS = 7;
/**
 * Room for the largest operation an SDK signs: a BATCH_ADD_USER of 25 users, each carrying the user's
 * public key as the directory gave it (an RSA-2048 SPKI, 392 base64 characters), is about 20 KB as a JWS.
 */
export const MAX_OPERATION_LENGTH = 32 * 1024;
export const MAX_USERS_PER_OPERATION = 100;


// --- POST /auth/certificate -------------------------------------------------------------------------

export const certificateRequestSchema = z.object({
  ephemeralKey: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(512, operationErrors.ephemeralKeyInvalid), checkText()),
});

/** `certificateChain`: standard base64 DER, leaf first, then the platform CA. */
export const certificateResponseSchema = z.object({ certificateChain: z.array(z.string()), userId: z.string() });
export type CertificateResponse = z.infer<typeof certificateResponseSchema>;

// --- GET /device/mine, /device/{lockId} --------------------------------------------------------------

/** A lock as the user it is shared with sees it; owners of the application see theirs as ADMIN, unbounded. */
export const deviceLockSchema = z.object({
  id: z.string(),
  name: z.string(),
  colour: z.nullable(z.string()),
  role: lockRoleSchema,
  /** The share's bounds, epoch seconds; null = unbounded. */
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
  settings: lockSettingsSchema,
  state: lockStateSchema,
});
export type DeviceLock = z.infer<typeof deviceLockSchema>;
export const deviceLockListSchema = z.array(deviceLockSchema);
export const deviceLockParamsSchema = z.object({ lockId: idParam() });

// --- POST /device/{lockId}/execute: the operation payload --------------------------------------------

/** Where the user is, as their device reports it: required when the lock's location rule is enabled. */
export const operationLocationSchema = z.object({
  latitude: latitudeSchema,
  longitude: longitudeSchema,
  /** Metres (the reported position's uncertainty radius). */
  accuracy: z.number({ error: messages.required }).check(z.gte(0, operationErrors.locationInaccurate), z.lte(100_000, operationErrors.locationInaccurate)),
});
export type OperationLocation = z.infer<typeof operationLocationSchema>;

const durationSchema = z
  .number()
  .check(z.refine(Number.isInteger, operationErrors.durationRange), z.gte(LOCK_UNLOCK_TIME_MIN_S, operationErrors.durationRange), z.lte(LOCK_UNLOCK_TIME_MAX_S, operationErrors.durationRange));
const location = z.optional(operationLocationSchema);

/** `duration` absent: the lock's own unlock time (the JS SDK's lock() sends none). */
export const mutateLockOperationSchema = z.object({ type: z.literal('MUTATE_LOCK'), locked: z.boolean(), duration: z.nullish(durationSchema), location });
export const addUserOperationSchema = z.object({
  type: z.literal('ADD_USER'),
  /** The application user's id (GET /platform/auth, or the owner's user list). */
  user: z.uuid({ error: operationErrors.unknownUser }),
  /** Sent by the SDKs; the platform keeps no per-user key, so it is accepted and not used. */
  publicKey: z.nullish(z.string().check(z.maxLength(512), checkText())),
  role: z._default(z.nullish(lockRoleSchema), 'USER'),
  /** The share's bounds, epoch seconds (1970 … 9999, like every time the platform accepts). */
  start: z.nullish(epochSeconds()),
  end: z.nullish(epochSeconds()),
  location,
});
/**
 * The headless SDK's batch share (BatchShareLockOperationRequest), sent when the lock reports
 * BATCH_SHARING_25: one signed operation sharing with up to 25 users, each as an ADD_USER; all or none.
 */
export const MAX_BATCH_ADD_USERS = 25;
export const batchAddUserOperationSchema = z.object({
  type: z.literal('BATCH_ADD_USER'),
  users: z
    .array(z.omit(addUserOperationSchema, { type: true, location: true }))
    .check(z.minLength(1, messages.required), z.maxLength(MAX_BATCH_ADD_USERS, `At most ${MAX_BATCH_ADD_USERS} users per batch`)),
  location,
});
export const removeUserOperationSchema = z.object({
  type: z.literal('REMOVE_USER'),
  users: z.array(z.uuid({ error: operationErrors.unknownUser })).check(z.minLength(1, messages.required), z.maxLength(MAX_USERS_PER_OPERATION, messages.tooLong)),
  location,
});
/** `unlockBetween`: the lock's time rule (replaces the rules it had); null with no unlockDuration clears them. */
export const mutateSettingOperationSchema = z.object({
  type: z.literal('MUTATE_SETTING'),
  unlockDuration: z.nullish(durationSchema),
  unlockBetween: z.nullish(z.extend(timeRuleSchema, { exceptions: z.nullish(z.array(z.string().check(z.maxLength(64, messages.tooLong), checkText())).check(z.maxLength(366, messages.tooLong))) })),
  location,
});
export const operationSchema = z.discriminatedUnion('type', [mutateLockOperationSchema, addUserOperationSchema, batchAddUserOperationSchema, removeUserOperationSchema, mutateSettingOperationSchema]);
export type Operation = z.infer<typeof operationSchema>;

/**
 * An operation's own times (`exp`, `nbf`, `iat`): epoch seconds within the bounds of every time the
 * platform accepts (time.ts); anything else is `operationErrors.timesMissing`.
 */
export const isOperationTime = (value: unknown): value is number => isEpochSeconds(value);

/**
 * The JWS payload. Header: `{alg: "EdDSA", typ: "JWT", x5c}` (one SDK writes `type` for `typ`). `jti` is
 * optional for older clients: then the signature itself is what may be used only once. `location` may sit
 * here or inside `operation`.
 */
export interface OperationClaims {
  iss: string;
  sub: string;
  nbf?: number;
  iat?: number;
  exp: number;
  jti?: string;
  operation: Operation;
  location?: OperationLocation;
}

