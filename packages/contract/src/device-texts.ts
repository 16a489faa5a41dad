/**
 * Locks that connect (shared/design/device-protocol.md): limits, topics and the API's device texts. No
 * schemas here, so the portal's string table can import the texts without building any (the schemas are
 * in devices.ts for the owner's routes and device-messages.ts for the device's own calls and messages).
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
/** The embedded broker holds at most this many connections of one device at once (a reconnect under the same client id replaces its old one). */
export const MAX_DEVICE_CONNECTIONS = 4;
/** The embedded broker grants a device at most this many subscriptions over its connections. */
export const MAX_DEVICE_SUBSCRIPTIONS = 32;
/**
 * A device's presence is announced to webhooks (device.online / device.offline) at once after a quiet spell;
 * a change within this many seconds of the last one waits until the presence has held this long, and is
 * announced only if it still differs from what was announced (a flapping device gives two webhooks, not hundreds).
 */
export const DEVICE_PRESENCE_SETTLE_S = 5;
/** The presence and state reports the service records of one device: this many at once, then DEVICE_REPORTS_PER_MINUTE. */
export const DEVICE_REPORT_BURST = 20;
/** Reports over the rate are not lost: the latest of each kind is recorded when the rate allows. */
export const DEVICE_REPORTS_PER_MINUTE = 60;

/** The topics of one device, under `latchkey/d/<deviceId>`. */
export const DEVICE_TOPICS = ['presence', 'state', 'config', 'op', 'result', 'renew', 'certificate', 'event'] as const;
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
  /** POST …/simulate/* on a lock bound to a device: only a sandbox lock's events are simulated. */
  simulateDeviceBacked: 'This lock has a device of its own: only a sandbox (virtual) lock’s events can be simulated',
  /** POST …/simulate/{kind} with a kind there is none of. */
  simulateUnknown: 'Unknown event: simulate door_opened, door_closed, battery, jammed, tampered, offline, online or keypad',
  /** POST …/simulate/battery without a level, or one outside 0–100. */
  batteryRange: 'The battery level (value) is a whole number from 0 to 100',
} as const;

/**
 * What only a lock answers; every other refusal is the platform's own text (`operationErrors`), so a
 * user reads the same reason whether the platform or the lock refused.
 */
export const deviceRefusals = {
  noConfig: 'The lock has no configuration from the platform yet',
  actuatorFailed: 'The lock did not move: its actuator failed',
  configMalformed: 'The configuration is not a compact JWS: three base64 or base64url parts separated by dots',
  configInvalid: 'The configuration payload is not a valid lock configuration',
  configChain: 'The configuration is not signed by the Latchkey platform CA',
  configSignature: 'The configuration signature does not match its certificate',
  configLock: 'The configuration is for another lock',
  configOlder: 'The configuration is older than the one the lock holds',
  notRecorded: 'The lock could not record the operation as used, so it did not act on it',
  tooManyRefusals: 'Too many refused operations from this address: try again in a minute',
} as const;

/** What the lock's log says of an operation its device (real or virtual) decided. */
export const deviceLogReasons = {
  done: 'Done by the lock’s device',
  refused: (reason: string) => `Refused by the lock’s device: ${reason}`,
  /** What the device decided at its local endpoint (or `latchkey-device execute`) and reported afterwards. */
  doneLocal: 'Done by the lock’s device, at its local endpoint',
  refusedLocal: (reason: string) => `Refused by the lock’s device, at its local endpoint: ${reason}`,
  /** The device refused without saying why. */
  noReason: 'The lock refused the operation',
  /** The device's signed event chain skipped events: they never reached the platform. */
  eventsMissing: (from: number, to: number) => (from === to ? `Event ${from} from the lock is missing` : `Events ${from}–${to} from the lock are missing`),
  /** An event that does not follow on from the last one logged (its `prev` is another hash). */
  chainBroken: (seq: number) => `Event ${seq} from the lock does not follow on from the last one logged: the record was broken`,
} as const;
