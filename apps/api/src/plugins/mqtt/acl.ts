import { DEVICE_TOPIC_ROOT, MAX_DEVICE_MESSAGE_BYTES, type DeviceTopic } from '@latchkey/contract';

/** What a device sends: its presence, state, operation results, renewal requests and signed events. */
const DEVICE_PUBLISHES: readonly DeviceTopic[] = ['presence', 'state', 'result', 'renew', 'event'];

/**
 * The largest MQTT packet a device may send: the largest payload plus room for the topic, the packet id and
 * MQTT 5 properties. A packet announcing more is cut off from its first bytes, before it is buffered.
 */
export const MAX_DEVICE_PACKET_BYTES = MAX_DEVICE_MESSAGE_BYTES + 4096;

/** The device a topic belongs to and the topic's last level, or null outside `latchkey/d/<id>/<topic>`. */
function splitDeviceTopic(topic: string): { deviceId: string; rest: string } | null {
  const root = `${DEVICE_TOPIC_ROOT}/`;
  if (!topic.startsWith(root)) return null;
  const tail = topic.slice(root.length);
  const slash = tail.indexOf('/');
  if (slash <= 0) return null;
  return { deviceId: tail.slice(0, slash), rest: tail.slice(slash + 1) };
}

/** A device may publish only its own presence, state, results, renewals and events, each at most MAX_DEVICE_MESSAGE_BYTES. */
export function mayPublish(deviceId: string, topic: string, payloadBytes: number): boolean {
  const parts = splitDeviceTopic(topic);
  return parts !== null && parts.deviceId === deviceId && (DEVICE_PUBLISHES as readonly string[]).includes(parts.rest) && payloadBytes <= MAX_DEVICE_MESSAGE_BYTES;
}

/**
 * A device may subscribe to any filter under its own prefix (the exact topics or `+`/`#` below it), the
 * same rule as an external broker's `pattern readwrite latchkey/d/%u/#`. Wildcards above its id are refused.
 */
export function maySubscribe(deviceId: string, filter: string): boolean {
  const parts = splitDeviceTopic(filter);
  return parts !== null && parts.deviceId === deviceId && parts.rest.length > 0;
}

/** A message reaches a device only when it is under the device's own prefix. */
export function mayReceive(deviceId: string, topic: string): boolean {
  return splitDeviceTopic(topic)?.deviceId === deviceId;
}
