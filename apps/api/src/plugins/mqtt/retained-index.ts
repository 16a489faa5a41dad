import { Readable } from 'node:stream';
import type { AedesPublishPacket } from 'aedes';
import { topicMatches } from './topic-match.js';

/** The retained-message calls of Aedes's in-memory persistence that this index takes over. */
interface RetainedStore {
  storeRetained(packet: AedesPublishPacket): Promise<void>;
  createRetainedStream(pattern: string): Readable;
  createRetainedStreamCombi(patterns: string[]): Readable;
}

/** How many leading topic levels a bucket is keyed by: `latchkey/d/<device>`. */
const BUCKET_LEVELS = 3;

/** The bucket of a topic, or of a filter whose first levels hold no wildcard; null for a filter that has one. */
function bucketOf(topic: string): string | null {
  // A topic has no wildcard, so only a filter gets null.
  let end = -1;
  for (let level = 0; level < BUCKET_LEVELS; level++) {
    end = topic.indexOf('/', end + 1);
    if (end < 0) {
      end = topic.length;
      break;
    }
  }
  const head = topic.slice(0, end);
  return head.includes('+') || head.includes('#') ? null : head;
}

/**
 * Keeps the broker's retained messages by their first three topic levels (one bucket a device), so that a
 * subscription to a device's own topics reads that device's messages only. The in-memory persistence
 * tests every retained message against every filter subscribed: a device's three filters against two
 * retained messages of every device, so each connect cost grew with the fleet. A filter with a wildcard in
 * its first levels (the service's own `latchkey/d/+/presence`) still reads them all.
 */
export function indexRetained(persistence: RetainedStore): void {
  const buckets = new Map<string, Map<string, AedesPublishPacket>>();
  persistence.storeRetained = async (packet) => {
    const bucket = bucketOf(packet.topic)!;
    if (packet.payload.length === 0) {
      const messages = buckets.get(bucket);
      messages?.delete(packet.topic);
      if (messages?.size === 0) buckets.delete(bucket);
      return;
    }
    let messages = buckets.get(bucket);
    if (!messages) buckets.set(bucket, (messages = new Map()));
    messages.set(packet.topic, { ...packet });
  };
  function* matching(pattern: string): Generator<AedesPublishPacket> {
    const bucket = bucketOf(pattern);
    const candidates = bucket === null ? buckets.values() : [buckets.get(bucket)];
    for (const messages of candidates) {
      if (!messages) continue;
      for (const packet of messages.values()) if (topicMatches(pattern, packet.topic)) yield packet;
    }
  }
  persistence.createRetainedStream = (pattern) => Readable.from(matching(pattern));
  persistence.createRetainedStreamCombi = (patterns) => Readable.from((function* () {
    for (const pattern of patterns) yield* matching(pattern);
  })());
}
