import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { countUndelivered, eventAlgorithm, eventHash, EventLog, signEvent } from './event-log.js';
import { StateDir } from './state-dir.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
const tempState = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-events-'));
  dirs.push(dir);
  return new StateDir(dir);
};
const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()) as { seq: number; prev: string | null };

describe('signEvent', () => {
  it('picks the algorithm from the key: ES256 for P-256, ES384 for P-384, EdDSA for Ed25519, and refuses RSA', () => {
    const event = { eventId: '6f1c1a8e-0e5b-4d2a-9b7c-3f2e1d0c9b8a', seq: 1, prev: null, at: 1, type: 'tampered' as const };
    for (const [type, options, alg] of [
      ['ec', { namedCurve: 'P-256' }, 'ES256'],
      ['ec', { namedCurve: 'P-384' }, 'ES384'],
      ['ed25519', {}, 'EdDSA'],
    ] as const) {
      const { privateKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
      expect(eventAlgorithm(privateKey)).toBe(alg);
      const jws = signEvent(event, privateKey, 'device-1');
      const [head, body, signature] = jws.split('.') as [string, string, string];
      const hash = alg === 'EdDSA' ? null : alg === 'ES256' ? 'sha256' : 'sha384';
      expect(verify(hash, Buffer.from(`${head}.${body}`), { key: createPublicKey(privateKey), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(true);
    }
    expect(() => eventAlgorithm(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey)).toThrow(/P-256/);
  });
});

describe('EventLog', () => {
  it('continues from the log when a crash came between writing an event and the chain’s head, and drops a torn last line', async () => {
    const state = await tempState();
    const signer = { keyPem: p256(), deviceId: 'device-1' };
    const log = await EventLog.open(state);
    await log.append({ at: 1, type: 'door_opened' }, signer);
    const chainAfterFirst = await state.read('eventChain');
    const second = await log.append({ at: 2, type: 'door_closed' }, signer);
    await log.idle();
    // The head on disk says 1, the log holds 2, and a write was torn mid-line.
    await state.write('eventChain', chainAfterFirst!, 0o600);
    await state.append('events', 'eyJhbGciOiJFUzI1NiJ9.eyJzZX');

    const reopened = await EventLog.open(state);
    expect(reopened.head).toEqual({ seq: 2, hash: eventHash(second.jws) });
    expect(reopened.pending.map((e) => e.seq)).toEqual([1, 2]);
    const third = await reopened.append({ at: 3, type: 'tampered' }, signer);
    expect(payloadOf(third.jws)).toMatchObject({ seq: 3, prev: eventHash(second.jws) });
    expect((await state.read('events'))!.split('\n').filter(Boolean).map((line) => payloadOf(line).seq)).toEqual([1, 2, 3]);
  });

  it('keeps what was delivered out of the queue after a restart, and removes the file once all is delivered', async () => {
    const state = await tempState();
    const signer = { keyPem: p256(), deviceId: 'device-1' };
    const log = await EventLog.open(state);
    for (let i = 0; i < 4; i++) await log.append({ at: i, type: 'jammed' }, signer);
    await log.delivered(2);
    expect(await countUndelivered(state)).toBe(2);
    expect((await EventLog.open(state)).pending.map((e) => e.seq)).toEqual([3, 4]);
    await log.delivered(4);
    expect(await state.read('events')).toBeNull();
    const reopened = await EventLog.open(state);
    expect(reopened.pending).toEqual([]);
    expect(reopened.head.seq).toBe(4);
  });
});
