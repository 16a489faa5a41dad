import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AedesPublishPacket } from 'aedes';
import { indexRetained } from './retained-index.js';

const packet = (topic: string, payload: string) => ({ cmd: 'publish', topic, payload: Buffer.from(payload), qos: 1, retain: true, dup: false }) as unknown as AedesPublishPacket;
const unused = () => {
  throw new Error('the unindexed store was read');
};

async function store() {
  const persistence = { storeRetained: unused, createRetainedStream: unused, createRetainedStreamCombi: unused } as unknown as Parameters<typeof indexRetained>[0];
  indexRetained(persistence);
  for (const [topic, payload] of [
    ['latchkey/d/a/presence', 'online'],
    ['latchkey/d/a/config', 'config-a'],
    ['latchkey/d/b/presence', 'offline'],
    ['latchkey/d/ab/presence', 'online'],
    ['other', 'x'],
  ] as const)
    await persistence.storeRetained(packet(topic, payload));
  const read = async (stream: Readable) => (await stream.toArray()).map((p: AedesPublishPacket) => `${p.topic}=${p.payload.toString()}`).sort();
  return { persistence, read };
}

describe('the retained messages kept by device', () => {
  it('gives a filter exactly the retained messages it matches, with or without a wildcard in its first levels', async () => {
    const { persistence, read } = await store();
    expect(await read(persistence.createRetainedStreamCombi(['latchkey/d/a/config', 'latchkey/d/a/op']))).toEqual(['latchkey/d/a/config=config-a']);
    expect(await read(persistence.createRetainedStream('latchkey/d/a/#'))).toEqual(['latchkey/d/a/config=config-a', 'latchkey/d/a/presence=online']);
    expect(await read(persistence.createRetainedStream('latchkey/d/+/presence'))).toEqual(['latchkey/d/a/presence=online', 'latchkey/d/ab/presence=online', 'latchkey/d/b/presence=offline']);
    expect(await read(persistence.createRetainedStream('#'))).toHaveLength(5);
    expect(await read(persistence.createRetainedStream('other'))).toEqual(['other=x']);
  });

  it('replaces a topic’s retained message with a newer one, and forgets it on an empty one', async () => {
    const { persistence, read } = await store();
    await persistence.storeRetained(packet('latchkey/d/a/presence', 'offline'));
    await persistence.storeRetained(packet('latchkey/d/a/config', ''));
    expect(await read(persistence.createRetainedStream('latchkey/d/a/#'))).toEqual(['latchkey/d/a/presence=offline']);
  });
});
