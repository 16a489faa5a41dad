import * as z from 'zod/mini';
import { deviceErrors, MAX_CSR_LENGTH, MAX_DEVICE_MESSAGE_BYTES, MAX_DIRECT_ACCESS_ENDPOINTS, MAX_FIRMWARE_LENGTH } from './device-texts.js';
import { ACCESS_METHODS, lockRoleSchema, timeRuleSchema, usageRequirementsSchema } from './locks.js';
import { messages } from './messages.js';
import { MAX_OPERATION_LENGTH } from './operations.js';
import { checkText } from './text.js';

/**
 * What a device sends and receives (shared/design/device-protocol.md): its provisioning call and the MQTT
 * payloads under `latchkey/d/<deviceId>`. The device package and the API read these shapes from here.
 */

// --- Device: POST /device-provisioning ----------------------------------------------------------------

export const provisioningRequestSchema = z.object({
  code: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(100, deviceErrors.codeInvalid), checkText()),
  csr: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(MAX_CSR_LENGTH, deviceErrors.csrInvalid)),
});

export const provisioningResponseSchema = z.object({
  deviceId: z.string(),
  lockId: z.string(),
  /** PEM, about 90 days. */
  certificate: z.string(),
  /** PEM: the device CA, then the platform CA that signs user leaves and configs. */
  caCertificates: z.array(z.string()),
  mqttUrl: z.string(),
  topicPrefix: z.string(),
  /**
   * The device's offline-code secret (base64url of 32 random bytes): given once, here, and never in a
   * config or a log; the platform computes offline access codes from it without reaching the device.
   */
  offlineCodeSecret: z.optional(z.string()),
});
export type ProvisioningResponse = z.infer<typeof provisioningResponseSchema>;

// --- MQTT payloads --------------------------------------------------------------------------------------

export const devicePresenceSchema = z.enum(['online', 'offline']);

/** `…/state`, device → platform, retained. */
export const deviceStateMessageSchema = z.object({
  locked: z.boolean(),
  firmware: z.string().check(z.maxLength(MAX_FIRMWARE_LENGTH), checkText()),
  at: z.iso.datetime({ offset: true }),
  directAccessEndpoints: z.optional(z.array(z.url({ protocol: /^https?$/ })).check(z.maxLength(MAX_DIRECT_ACCESS_ENDPOINTS))),
  /** The version of the config the device holds now: an online access code in it is `set`. */
  configVersion: z.optional(z.int().check(z.nonnegative())),
});
export type DeviceStateMessage = z.infer<typeof deviceStateMessageSchema>;

/** One user in a device config: who may operate the lock, with which role and window. */
export const deviceConfigUserSchema = z.object({
  userId: z.string(),
  /** The user's current Ed25519 key (standard base64 of the 32 raw bytes), or "" when none is certified yet. */
  publicKey: z.string(),
  role: lockRoleSchema,
  /** Epoch seconds; null = unbounded. */
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
  /** A share's days and hours (an addition to the document's shape; absent = any time). */
  timeWindow: z.optional(z.nullable(timeRuleSchema)),
  /**
   * Epoch seconds: an operation signed under a certificate of this user whose notBefore is earlier is
   * refused. Set when the user's earlier certificates were ended (a password reset or change); absent or
   * null = none ended.
   */
  certifiedAfter: z.optional(z.nullable(z.int())),
});
export type DeviceConfigUser = z.infer<typeof deviceConfigUserSchema>;

/** One access code in a device config. */
export const deviceConfigAccessCodeSchema = z.object({
  accessCodeId: z.string(),
  hash: z.string(),
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
});
export type DeviceConfigAccessCode = z.infer<typeof deviceConfigAccessCodeSchema>;

/** The payload of the `…/config` JWS (EdDSA, x5c to the platform CA). */
export const deviceConfigSchema = z.object({
  lockId: z.string(),
  version: z.int().check(z.nonnegative()),
  unlockTime: z.number(),
  usageRequirements: usageRequirementsSchema,
  users: z.array(deviceConfigUserSchema),
  /** Epoch seconds: when the platform issued this config. With the grace, when it lapses. */
  issuedAt: z.optional(z.int()),
  /**
   * Seconds after `issuedAt` the device keeps obeying signed operations without a newer config; after
   * that it refuses them (access codes keep working within their windows).
   */
  offlineGraceSeconds: z.optional(z.int().check(z.positive())),
  /** The salt of every `accessCodes[].hash`: base64url(SHA-256(salt + ":" + code)). */
  accessCodeSalt: z.optional(z.string()),
  /** The lock's current online access codes, as salted hashes (never the code). Times are epoch seconds; null = unbounded. */
  accessCodes: z.optional(z.array(deviceConfigAccessCodeSchema)),
  /** Offline codes withdrawn before their end, as salted hashes like `accessCodes`: refused until `end`. */
  withdrawnOfflineCodes: z.optional(z.array(deviceConfigAccessCodeSchema)),
});
export type DeviceConfig = z.infer<typeof deviceConfigSchema>;

/** `…/op`, platform → device: the user's operation exactly as they signed it. */
export const deviceOperationMessageSchema = z.object({
  requestId: z.string().check(z.minLength(1), z.maxLength(100)),
  jws: z.string().check(z.minLength(1), z.maxLength(MAX_DEVICE_MESSAGE_BYTES)),
});
export type DeviceOperationMessage = z.infer<typeof deviceOperationMessageSchema>;

/**
 * `…/result`, device → platform. An answer to an operation from `…/op` names its requestId. An outcome the
 * device decided on its own (its local endpoint, `latchkey-device execute`) says `method: "local"`, when it
 * was decided (`at`), and — done — the operation's JWS, which the platform checks and logs once; refusals
 * there are reported together, `count` of them with one reason. A refusal whose reason is in the operation
 * catalogue names its key (`reasonKey`, one of `operationErrors`' keys): the platform counts the refusal by
 * that key, and one without it (an older device, or a reason only a lock gives) as `other`, never by its text.
 */
export const deviceResultSchema = z.object({
  requestId: z.string().check(z.minLength(1), z.maxLength(100)),
  outcome: z.enum(['DONE', 'REFUSED']),
  reason: z.optional(z.string().check(z.maxLength(500), checkText())),
  reasonKey: z.optional(z.string().check(z.maxLength(100), checkText())),
  state: z.optional(z.object({ locked: z.boolean() })),
  method: z.optional(z.enum(['local'])),
  at: z.optional(z.iso.datetime({ offset: true })),
  jws: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_OPERATION_LENGTH))),
  count: z.optional(z.int().check(z.minimum(1), z.maximum(1_000_000))),
});
export type DeviceResult = z.infer<typeof deviceResultSchema>;

/** `…/renew` carries a CSR PEM as text; `…/certificate` answers with this. */
export const deviceCertificateMessageSchema = z.object({ certificate: z.string() });

// --- Events from the door: `…/event`, device → platform, QoS 1 ------------------------------------------

export const DEVICE_EVENT_TYPES = [
  'unlocked',
  'locked',
  'access_denied',
  'keypad_locked_out',
  'door_opened',
  'door_closed',
  'battery',
  'jammed',
  'tampered',
] as const;

/**
 * The payload of one event: a compact JWS signed with the device's own key (the key of its client
 * certificate). `seq` counts up by one per device from 1; `prev` is base64url(SHA-256(previous event's
 * JWS)), null for the first, so the record is a chain the platform checks. `at` is epoch milliseconds of
 * when the door decided; `offline` marks what it decided while it could not reach the platform.
 */
export const deviceEventSchema = z.object({
  eventId: z.uuid(),
  seq: z.int().check(z.positive()),
  prev: z.nullable(z.string().check(z.maxLength(100))),
  at: z.int().check(z.nonnegative()),
  type: z.enum(DEVICE_EVENT_TYPES),
  method: z.optional(z.enum(ACCESS_METHODS)),
  userId: z.optional(z.string().check(z.maxLength(100))),
  accessCodeId: z.optional(z.string().check(z.maxLength(100))),
  reason: z.optional(z.string().check(z.maxLength(500), checkText())),
  value: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
  offline: z.optional(z.boolean()),
  /** An unlock or refusal by an offline code: its window (epoch seconds), which names the code on its lock. */
  codeWindow: z.optional(z.object({ start: z.int(), end: z.int() })),
  /** The device's queue of undelivered events overflowed: this many older events were dropped before this one. */
  dropped: z.optional(z.int().check(z.positive())),
});
export type DeviceEvent = z.infer<typeof deviceEventSchema>;
