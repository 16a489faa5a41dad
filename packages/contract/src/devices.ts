import { z } from 'zod';
import { lockRoleSchema, timeRuleSchema, usageRequirementsSchema } from './locks.js';
import { messages } from './messages.js';
import { checkText, idParam } from './text.js';

/**
 * Locks that connect (shared/design/device-protocol.md): the owner's provisioning routes, the device's
 * provisioning call, and the MQTT messages under `latchkey/d/<deviceId>`. The device package, the API and
 * the portal all read these shapes from here.
 */

/** A provisioning code is single-use and expires this long after it was made. */
export const PROVISIONING_CODE_TTL_S = 15 * 60;
/** How long a device certificate is valid; a device renews it over MQTT before then. */
export const DEVICE_CERTIFICATE_DAYS = 90;
/** A device renews when less than this is left of its certificate. */
export const DEVICE_RENEW_BEFORE_DAYS = 30;
/** Default wait for a device's result (`DEVICE_TIMEOUT_SECONDS`). */
export const DEVICE_TIMEOUT_DEFAULT_S = 5;
/** A device remembers an operation's jti (or signature) this long and refuses it again. */
export const DEVICE_REPLAY_WINDOW_S = 120;
/** The largest MQTT payload a device or the platform accepts on a device topic. */
export const MAX_DEVICE_MESSAGE_BYTES = 64 * 1024;
export const MAX_CSR_LENGTH = 8 * 1024;
export const MAX_FIRMWARE_LENGTH = 100;
export const MAX_DIRECT_ACCESS_ENDPOINTS = 4;
export const DEVICE_TOPIC_ROOT = 'latchkey/d';

/** The topics of one device, under `latchkey/d/<deviceId>`. */
export const DEVICE_TOPICS = ['presence', 'state', 'config', 'op', 'result', 'renew', 'certificate'] as const;
export type DeviceTopic = (typeof DEVICE_TOPICS)[number];
export const deviceTopicPrefix = (deviceId: string) => `${DEVICE_TOPIC_ROOT}/${deviceId}`;
export const deviceTopic = (deviceId: string, topic: DeviceTopic) => `${DEVICE_TOPIC_ROOT}/${deviceId}/${topic}`;

/** What the API answers about devices; a device's own refusal reason is passed through as it came. */
export const deviceErrors = {
  offline: 'The lock is offline',
  noAnswer: 'The lock did not answer',
  noDevice: 'This lock has no device',
  codeInvalid: 'This provisioning code is unknown, used or expired: make a new one on the lock’s page',
  csrInvalid: 'The certificate request is not a PKCS#10 PEM signed by its own ECDSA P-256 or Ed25519 key',
  csrSubject: 'The certificate request must name no subject, or CN=<deviceId>',
} as const;

// --- Owner: POST/GET/DELETE /platform/application/{id}/lock/{lockId}/device -----------------------------

export const deviceCreatedSchema = z.object({
  deviceId: z.string(),
  /** Shown once; stored hashed. */
  provisioningCode: z.string(),
  /** Epoch seconds. */
  expiresAt: z.number(),
});
export type DeviceCreated = z.infer<typeof deviceCreatedSchema>;

export const deviceStatusSchema = z.object({
  deviceId: z.string(),
  /** false until the device has used its provisioning code. */
  provisioned: z.boolean(),
  /** Presence: the device's retained `online`, until its Last Will says `offline`. */
  connected: z.boolean(),
  /** Epoch seconds of the last message from the device; null before the first. */
  lastSeen: z.nullable(z.number()),
  firmware: z.nullable(z.string()),
  /** The device's last reported state; null before its first report. */
  locked: z.nullable(z.boolean()),
  /** While a code is waiting to be used: when it expires (epoch seconds). */
  codeExpiresAt: z.nullable(z.number()),
});
export type DeviceStatus = z.infer<typeof deviceStatusSchema>;

// --- Device: POST /device-provisioning ----------------------------------------------------------------

export const provisioningRequestSchema = z.object({
  code: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(100, deviceErrors.codeInvalid), checkText()),
  csr: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(MAX_CSR_LENGTH, deviceErrors.csrInvalid)),
});
export type ProvisioningRequest = z.infer<typeof provisioningRequestSchema>;

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

export const deviceParamsSchema = z.object({ applicationId: idParam(), lockId: idParam() });

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
});
export type DeviceConfigUser = z.infer<typeof deviceConfigUserSchema>;

/** The payload of the `…/config` JWS (EdDSA, x5c to the platform CA). */
export const deviceConfigSchema = z.object({
  lockId: z.string(),
  version: z.number().check(z.int(), z.nonnegative()),
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

/** `…/result`, device → platform. */
export const deviceResultSchema = z.object({
  requestId: z.string().check(z.minLength(1), z.maxLength(100)),
  outcome: z.enum(['DONE', 'REFUSED']),
  reason: z.optional(z.string().check(z.maxLength(500), checkText())),
  state: z.optional(z.object({ locked: z.boolean() })),
});
export type DeviceResult = z.infer<typeof deviceResultSchema>;

/** `…/renew` carries a CSR PEM as text; `…/certificate` answers with this. */
export const deviceCertificateMessageSchema = z.object({ certificate: z.string() });
