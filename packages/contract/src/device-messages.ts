import * as z from 'zod/mini';
import { deviceErrors, MAX_CSR_LENGTH, MAX_DEVICE_MESSAGE_BYTES, MAX_DIRECT_ACCESS_ENDPOINTS, MAX_FIRMWARE_LENGTH } from './device-texts.js';
import { lockRoleSchema, timeRuleSchema, usageRequirementsSchema } from './locks.js';
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

/** The payload of the `…/config` JWS (EdDSA, x5c to the platform CA). */
export const deviceConfigSchema = z.object({
  lockId: z.string(),
  version: z.int().check(z.nonnegative()),
  unlockTime: z.number(),
  usageRequirements: usageRequirementsSchema,
  users: z.array(deviceConfigUserSchema),
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
 * there are reported together, `count` of them with one reason.
 */
export const deviceResultSchema = z.object({
  requestId: z.string().check(z.minLength(1), z.maxLength(100)),
  outcome: z.enum(['DONE', 'REFUSED']),
  reason: z.optional(z.string().check(z.maxLength(500), checkText())),
  state: z.optional(z.object({ locked: z.boolean() })),
  method: z.optional(z.enum(['local'])),
  at: z.optional(z.iso.datetime({ offset: true })),
  jws: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_OPERATION_LENGTH))),
  count: z.optional(z.int().check(z.minimum(1), z.maximum(1_000_000))),
});
export type DeviceResult = z.infer<typeof deviceResultSchema>;

/** `…/renew` carries a CSR PEM as text; `…/certificate` answers with this. */
export const deviceCertificateMessageSchema = z.object({ certificate: z.string() });
