import * as z from 'zod/mini';
import { checkText, idParam } from './text.js';

/**
 * Webhooks (platform-api.md, "History and webhooks"): HTTPS endpoints an owner registers per application
 * with the events they want; deliveries are signed Standard-Webhooks style and retried for about a day.
 */
export const WEBHOOK_EVENTS = [
  'lock.unlocked',
  'lock.unlock_refused',
  'share.added',
  'share.revoked',
  'invitation.accepted',
  'application.updated',
  /** A lock's device connected (its presence turned `online`). */
  'device.online',
  /** A lock's device went away (`offline`: it said so, or the broker published its Last Will). */
  'device.offline',
  /** The door's sensor says it opened / closed. */
  'lock.door_opened',
  'lock.door_closed',
  /** A battery report below LOW_BATTERY_LEVEL, once each time the level falls below it. */
  'device.low_battery',
  /** The lock's bolt could not move. */
  'device.jammed',
  /** The lock says it was tampered with. */
  'device.tampered',
  /** A device's event chain skipped events or did not follow on from the last one logged. */
  'device.audit_gap',
] as const;
export const webhookEventSchema = z.enum(WEBHOOK_EVENTS);
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/**
 * "Send a test event" — a signed delivery to one endpoint, whatever it subscribed to, through the
 * same queue and log as every other: `POST …/webhook/{webhookId}/test`. Its body is
 * `{ type: 'webhook.test', timestamp, data: { webhookId, applicationId } }`. Not an event to subscribe to.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
/** Every `type` a delivery can carry: the events, and the test event. */
export const WEBHOOK_DELIVERY_EVENTS = [...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT] as const;
export const webhookDeliveryEventSchema = z.enum(WEBHOOK_DELIVERY_EVENTS);
export type WebhookDeliveryEvent = z.infer<typeof webhookDeliveryEventSchema>;
/** Test events per owner and window (they call the receiver): on top of the general rate limit. */
export const WEBHOOK_TEST_LIMIT = { max: 10, windowSeconds: 60 } as const;

export const MAX_WEBHOOKS_PER_APPLICATION = 10;
export const WEBHOOK_URL_MAX_LENGTH = 2000;
/** The prefix of a signing secret; the rest is the base64 key (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_DELIVERY_PAGE_SIZE = 100;

export const webhookErrors = {
  urlRequired: 'Enter the endpoint’s URL',
  urlTooLong: `The URL can be at most ${WEBHOOK_URL_MAX_LENGTH} characters`,
  eventsRequired: 'Choose at least one event',
  unknownEvent: 'Unknown event type',
  tooMany: `An application can have at most ${MAX_WEBHOOKS_PER_APPLICATION} webhooks`,
  urlExists: 'This application already has a webhook for this URL',
  webhookNotFound: 'Webhook not found',
  deliveryNotFound: 'Delivery not found',
  invalidCursor: 'This page link is not valid; load the deliveries again from the start',
} as const;

export const createWebhookSchema = z.object({
  url: z.string({ error: webhookErrors.urlRequired }).check(z.trim(), z.minLength(1, webhookErrors.urlRequired), z.maxLength(WEBHOOK_URL_MAX_LENGTH, webhookErrors.urlTooLong), checkText()),
  events: z
    .array(z.enum(WEBHOOK_EVENTS, { error: webhookErrors.unknownEvent }), { error: webhookErrors.eventsRequired })
    .check(z.minLength(1, webhookErrors.eventsRequired), z.maxLength(WEBHOOK_EVENTS.length, webhookErrors.eventsRequired)),
});
export type CreateWebhook = z.infer<typeof createWebhookSchema>;

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(webhookEventSchema),
  /** Epoch seconds. */
  createdAt: z.number(),
});
export type Webhook = z.infer<typeof webhookSchema>;

/** The answer to registering a webhook or rotating its secret: the only time the secret is shown. */
export const webhookWithSecretSchema = z.extend(webhookSchema, { secret: z.string() });
export type WebhookWithSecret = z.infer<typeof webhookWithSecretSchema>;

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const;
export const deliveryStatusSchema = z.enum(DELIVERY_STATUSES);

export const webhookDeliverySchema = z.object({
  /** Also the `webhook-id` header: a receiver de-duplicates on it. */
  id: z.string(),
  eventType: webhookDeliveryEventSchema,
  status: deliveryStatusSchema,
  attempts: z.number(),
  responseStatus: z.nullable(z.number()),
  /** Why the last attempt failed without an answer (timeout, refused address …). */
  error: z.nullable(z.string()),
  /** When the event happened, epoch seconds. */
  at: z.number(),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const webhookIdParamsSchema = z.object({ applicationId: z.uuid({ error: 'Not a valid application id' }), webhookId: idParam() });
export const deliveryIdParamsSchema = z.object({ applicationId: z.uuid({ error: 'Not a valid application id' }), webhookId: idParam(), deliveryId: idParam() });

/** What a delivery's body carries. */
export interface WebhookPayload<T = unknown> {
  type: WebhookDeliveryEvent;
  /** ISO 8601. */
  timestamp: string;
  data: T;
}

/** What every lock event's `data` names: the application and the lock. */
export interface LockWebhookData {
  applicationId: string;
  lockId: string;
  lockName: string;
}
/** Where an event came from: the platform deciding (a signed operation through the cloud) or the door telling (a signed event, or a sandbox lock's). */
export interface EventOrigin {
  source: 'platform' | 'device';
}
/** What a door reported: its device (null for a sandbox lock), whether it decided while offline, and when (ISO 8601, the door's own time). */
export interface DoorEventData extends LockWebhookData, EventOrigin {
  deviceId: string | null;
  offline: boolean;
  at: string;
}
/**
 * lock.unlocked / lock.unlock_refused: who (userId and email, null for an access code) and how (`method`:
 * mobile_key, local, access_code, tile, console; `accessCodeId` for a code). From a door's event they also
 * carry DoorEventData's deviceId, offline and at.
 */
export interface UnlockWebhookData extends LockWebhookData, EventOrigin {
  userId: string | null;
  email: string | null;
  method: 'mobile_key' | 'local' | 'access_code' | 'tile' | 'console' | null;
  accessCodeId: string | null;
  /** lock.unlocked: the unlock time in seconds. */
  duration?: number;
  /** lock.unlock_refused: why. */
  reason?: string;
}
/** lock.door_opened, lock.door_closed, device.jammed, device.tampered: DoorEventData; device.low_battery adds the level. */
export interface LowBatteryWebhookData extends DoorEventData {
  battery: number;
}
/** device.audit_gap: events the platform never received (`missing`, with their seqs), or one that does not follow on from the last (`broken`). */
export interface AuditGapWebhookData extends LockWebhookData {
  deviceId: string;
  kind: 'missing' | 'broken';
  missingFrom: number | null;
  missingTo: number | null;
  /** The event that showed the gap. */
  seq: number;
  reason: string;
}

/**
 * `GET …/webhook/{webhookId}/delivery?cursor`: the body stays the documented array (newest first,
 * `WEBHOOK_DELIVERY_PAGE_SIZE` at most); when there are older ones the answer carries
 * `Link: <…/delivery?cursor=…>; rel="next"` (RFC 8288), the next page's URL. The cursor is opaque.
 */
export const deliveryQuerySchema = z.object({ cursor: z.optional(z.string().check(z.maxLength(200, webhookErrors.invalidCursor), checkText())) });

/** The next page's cursor from a delivery list's `Link` header; null on the last page. */
export function nextDeliveryCursor(link: string | null | undefined): string | null {
  const next = link?.split(',').find((part) => /;\s*rel="?next"?/.test(part));
  const url = next?.match(/<([^>]*)>/)?.[1];
  return url ? new URL(url, 'http://x').searchParams.get('cursor') : null;
}
