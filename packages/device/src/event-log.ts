import { createHash, createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { DeviceEvent } from '@latchkey/contract';
import type { LockEvent } from './controller.js';
import type { StateDir } from './state-dir.js';

/**
 * The door's own record: every event the lock decides or notices is signed with the device's key (the
 * key of its client certificate) as a compact JWS, numbered (`seq` from 1, one up each time) and chained
 * (`prev` = base64url(SHA-256(utf8(previous event's JWS))), null for the first), and on disk before it is
 * published. What the platform has not acknowledged stays on disk and goes out in order once connected.
 *
 * Files in the state directory: `events.log`, one JWS a line (appended and synced; delivered lines are
 * skipped and the file rewritten now and then), and `event-chain.json`, the head of the chain (last seq
 * and hash), the last seq delivered or dropped, and how many were dropped since the queue last emptied.
 * A restart continues the chain from whichever of the two is further along.
 */

/** Undelivered events kept; past it the oldest are dropped (and the next event says how many). */
export const MAX_QUEUED_EVENTS = 10_000;
/** Events published before the delivery mark on disk moves on (a crash sends at most this many again; the platform ignores a repeat eventId). */
const DELIVERY_BATCH = 50;

export interface QueuedEvent {
  seq: number;
  jws: string;
}

interface ChainFile {
  /** The last event signed: its seq and the hash of its JWS (0 and null before the first). */
  seq: number;
  hash: string | null;
  /** Every event up to this seq was delivered or dropped. */
  done: number;
  /** Events dropped (queue full) since the queue last emptied: carried by each new event as `dropped`. */
  dropped: number;
}

/** The JWS algorithm for a device key: ES256 for P-256 (the key the device makes), ES384 for P-384, EdDSA for Ed25519. */
export function eventAlgorithm(key: KeyObject): 'ES256' | 'ES384' | 'EdDSA' {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1' || curve === 'P-256') return 'ES256';
    if (curve === 'secp384r1' || curve === 'P-384') return 'ES384';
  }
  throw new Error(`A device key must be ECDSA P-256, P-384 or Ed25519 to sign events (got ${key.asymmetricKeyType ?? 'unknown'})`);
}

/** A compact JWS of `event` with header {alg, typ: "JWT", kid: deviceId}; ECDSA signatures are r‖s (JWS form, not DER). */
export function signEvent(event: DeviceEvent, key: KeyObject, deviceId: string): string {
  const alg = eventAlgorithm(key);
  const input = `${b64(JSON.stringify({ alg, typ: 'JWT', kid: deviceId }))}.${b64(JSON.stringify(event))}`;
  const signature =
    alg === 'EdDSA' ? sign(null, Buffer.from(input), key) : sign(alg === 'ES256' ? 'sha256' : 'sha384', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** The chain link to an event: base64url(SHA-256(utf8(its JWS))). */
export const eventHash = (jws: string) => createHash('sha256').update(jws, 'utf8').digest('base64url');

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** The payload of one of our own event JWSs, or null for a line that is not one (a torn write). */
function readEvent(line: string): DeviceEvent | null {
  const parts = line.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as DeviceEvent;
    return Number.isSafeInteger(payload.seq) && payload.seq > 0 ? payload : null;
  } catch {
    return null;
  }
}

/** How many events wait to be delivered, read without changing anything (for `status` beside a running agent). */
export async function countUndelivered(state: StateDir): Promise<number> {
  let done = 0;
  try {
    done = (JSON.parse((await state.read('eventChain')) ?? '{}') as Partial<ChainFile>).done ?? 0;
  } catch {
    // Counted from the log alone.
  }
  const lines = ((await state.read('events')) ?? '').split('\n');
  return lines.filter((line) => (readEvent(line)?.seq ?? 0) > done).length;
}

export interface EventLogOptions {
  max?: number;
  /** Told when events are dropped (with how many since the queue last emptied). */
  onDrop?: (droppedNow: number, droppedSinceEmpty: number) => void;
}

export class EventLog {
  private chain: ChainFile;
  private queue: QueuedEvent[];
  /** Lines in events.log, delivered ones included. */
  private lines: number;
  /** One file operation at a time: appends, delivery marks and rewrites. */
  private ops: Promise<unknown> = Promise.resolve();
  private keys = new Map<string, KeyObject>();

  private constructor(
    private readonly state: StateDir,
    chain: ChainFile,
    queue: QueuedEvent[],
    lines: number,
    private readonly options: EventLogOptions,
  ) {
    this.chain = chain;
    this.queue = queue;
    this.lines = lines;
  }

  /** Reads the chain's head and the undelivered events; rewrites events.log when it held delivered or torn lines. */
  static async open(state: StateDir, options: EventLogOptions = {}): Promise<EventLog> {
    const chainText = await state.read('eventChain');
    let chain: ChainFile = { seq: 0, hash: null, done: 0, dropped: 0 };
    if (chainText) {
      try {
        chain = { ...chain, ...(JSON.parse(chainText) as Partial<ChainFile>) };
      } catch {
        // Rebuilt from the log below as far as it goes.
      }
    }
    const text = (await state.read('events')) ?? '';
    const lines = text.split('\n').filter(Boolean);
    const queue: QueuedEvent[] = [];
    let clean = text === '' || text.endsWith('\n');
    for (const line of lines) {
      const event = readEvent(line);
      if (!event) {
        clean = false;
        continue;
      }
      // Signed and written, but the crash came before the chain file said so: the log is further along.
      if (event.seq > chain.seq) chain = { ...chain, seq: event.seq, hash: eventHash(line) };
      if (event.seq > chain.done) queue.push({ seq: event.seq, jws: line });
      else clean = false;
    }
    const log = new EventLog(state, chain, queue, lines.length, options);
    if (!clean) await log.rewrite();
    return log;
  }

  /** The undelivered events, oldest first. */
  get pending(): readonly QueuedEvent[] {
    return this.queue;
  }

  /** The last seq signed and the hash of its JWS. */
  get head(): { seq: number; hash: string | null } {
    return { seq: this.chain.seq, hash: this.chain.hash };
  }

  /**
   * Numbers, chains and signs an event, and has it on disk (synced) before it returns; only then may it be
   * published. When the queue is full, the oldest undelivered events are dropped first and this event
   * says how many have been dropped since the queue last emptied (`dropped`).
   */
  append(event: LockEvent & { offline?: boolean }, signer: { keyPem: string; deviceId: string }): Promise<QueuedEvent> {
    return this.serially(async () => {
      const max = this.options.max ?? MAX_QUEUED_EVENTS;
      if (this.queue.length >= max) {
        const dropped = this.queue.splice(0, this.queue.length - max + 1);
        this.chain.done = dropped.at(-1)!.seq;
        this.chain.dropped += dropped.length;
        this.options.onDrop?.(dropped.length, this.chain.dropped);
      }
      const payload: DeviceEvent = {
        eventId: randomUUID(),
        seq: this.chain.seq + 1,
        prev: this.chain.hash,
        ...event,
        ...(this.chain.dropped > 0 ? { dropped: this.chain.dropped } : {}),
      };
      if (!payload.offline) delete payload.offline;
      const jws = signEvent(payload, this.key(signer.keyPem), signer.deviceId);
      await this.state.append('events', `${jws}\n`, 0o600);
      this.lines++;
      this.chain.seq = payload.seq;
      this.chain.hash = eventHash(jws);
      await this.writeChain();
      const queued = { seq: payload.seq, jws };
      this.queue.push(queued);
      if (this.lines > 2 * max) await this.rewrite();
      return queued;
    });
  }

  /** Marks every event up to `seq` as delivered (the broker acknowledged it); an emptied queue clears the drop count and the file. */
  delivered(seq: number): Promise<void> {
    return this.serially(async () => {
      if (seq <= this.chain.done) return;
      this.queue = this.queue.filter((event) => event.seq > seq);
      this.chain.done = seq;
      if (this.queue.length === 0) {
        this.chain.dropped = 0;
        await this.writeChain();
        await this.state.remove('events');
        this.lines = 0;
        return;
      }
      await this.writeChain();
    });
  }

  /** How many events to publish before marking them delivered. */
  readonly batch = DELIVERY_BATCH;

  /** Resolves once every file operation begun so far has ended. */
  async idle(): Promise<void> {
    await this.ops.catch(() => undefined);
  }

  private key(pem: string): KeyObject {
    let key = this.keys.get(pem);
    if (!key) {
      key = createPrivateKey(pem);
      this.keys.clear();
      this.keys.set(pem, key);
    }
    return key;
  }

  private async writeChain(): Promise<void> {
    await this.state.write('eventChain', JSON.stringify(this.chain), 0o600);
  }

  /** events.log with the undelivered events alone. */
  private async rewrite(): Promise<void> {
    await this.writeChain();
    if (this.queue.length === 0) await this.state.remove('events');
    else await this.state.write('events', this.queue.map((event) => `${event.jws}\n`).join(''), 0o600);
    this.lines = this.queue.length;
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.ops.then(step, step);
    this.ops = next.catch(() => undefined);
    return next;
  }
}
