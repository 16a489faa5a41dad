import type { ZodMiniType } from 'zod/mini';
import { DEVICE_TOPIC_ROOT, MAX_DEVICE_MESSAGE_BYTES, devicePresenceSchema, isUuid } from '@latchkey/contract';

/**
 * Reading what devices publish. Nothing a device sends is trusted beyond its topic's device id (the
 * broker admits a device only to its own prefix): every payload is size-checked and parsed with the
 * contract's schema, and anything else is dropped with the reason, never thrown.
 */

/** `latchkey/d/<deviceId>/<kind>` → its parts; null for any other topic or a device id that is no UUID. */
export function parseDeviceTopic(topic: string): { deviceId: string; kind: string } | null {
  const parts = topic.split('/');
  const root = DEVICE_TOPIC_ROOT.split('/');
  if (parts.length !== root.length + 2 || root.some((part, i) => parts[i] !== part)) return null;
  const deviceId = parts[root.length]!;
  if (!isUuid(deviceId)) return null;
  return { deviceId: deviceId.toLowerCase(), kind: parts[root.length + 1]! };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const tooLarge = (payload: Buffer) => payload.length > MAX_DEVICE_MESSAGE_BYTES;

/** A presence payload: `online` or `offline`, bare or as a JSON string. */
export function readPresence(payload: Buffer): Parsed<'online' | 'offline'> {
  if (tooLarge(payload)) return { ok: false, problem: 'oversized' };
  let text = payload.toString('utf8').trim();
  if (text.startsWith('"')) {
    try {
      text = String(JSON.parse(text));
    } catch {
      return { ok: false, problem: 'not a presence value' };
    }
  }
  const parsed = devicePresenceSchema.safeParse(text);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: 'not a presence value' };
}

/** A JSON payload checked against the contract's schema for it. */
export function readJson<T>(payload: Buffer, schema: ZodMiniType<T>): Parsed<T> {
  if (tooLarge(payload)) return { ok: false, problem: 'oversized' };
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: 'not the contract shape' };
}
