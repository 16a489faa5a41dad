import { createHash, createPublicKey, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import {
  LOW_BATTERY_LEVEL,
  deviceEventSchema,
  deviceLogReasons,
  type AccessMethod,
  type AuditGapWebhookData,
  type DeviceEvent,
  type DoorEventData,
  type LowBatteryWebhookData,
  type UnlockWebhookData,
  type LockAlarm,
  type WebhookEvent,
  type WebhookPayload,
} from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { lockActivity, locks, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { publishEvent } from '../../../lib/webhook-outbox.js';

/**
 * Events from the door (`latchkey/d/<deviceId>/event`): what a lock decided or noticed by itself — a keypad
 * code, a lockout, its door sensor, its battery, its alarms — each a compact JWS signed with the key of the
 * device's own certificate, numbered (`seq`) and chained (`prev`: the SHA-256 of the previous event's JWS).
 *
 * Each is checked before anything is written: its size and form, its signature with the public key of the
 * certificate THIS device holds (lock_devices.certificate_public_key), its payload (deviceEventSchema), and
 * its place in the chain against the last event logged (lock_devices.event_seq / event_hash):
 *  - an eventId already logged: ignored (a QoS 1 redelivery, or another instance heard it first);
 *  - seq = last + 1 and prev = the last hash: logged;
 *  - seq > last + 1: an AUDIT_GAP entry naming the missing events, then the event;
 *  - seq = last + 1 but prev is another hash: an AUDIT_GAP entry (broken chain), then the event;
 *  - seq <= last with an unknown eventId: refused (a replay or a forgery) — a warning and a count, no entry.
 * Its entry, the chain's new head and the lock's door, battery and alarms commit together, with the
 * webhooks it owes. The events of a device waiting together are handled as one run in one transaction, its
 * row locked once (so one instance at a time, on any instance): each checked against the chain as the
 * events before it left it, the entries written together, the lock's state and the chain's head once.
 */

export type EventOutcome = 'logged' | 'repeat' | 'refused';
/** Why an event was refused (the metric's label). */
export type EventRefusal = 'malformed' | 'unknown_device' | 'other_device' | 'signature' | 'schema' | 'replay' | 'overflow';

/** An event's JWS is at most this long (its payload is a few hundred bytes; a reason at most 500 characters). */
export const MAX_EVENT_BYTES = 8 * 1024;
/** Events of one device received and not yet handled, at most (a door's own queue holds 10,000). */
export const MAX_EVENTS_WAITING = 10_000;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** The SPKI PEM of a certificate's public key: what a device's events are verified with. */
export function certificatePublicKeyPem(certificatePem: string): string {
  return new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * What certificate_public_key holds after a renewal: the new certificate's key, then the key it renewed
 * from (only that one: older keys are forgotten), each an SPKI PEM block.
 */
export function renewedPublicKeys(certificatePem: string, before: string | null): string {
  const previous = before ? pemBlocks(before)[0] : undefined;
  return [certificatePublicKeyPem(certificatePem), ...(previous ? [previous] : [])].join('');
}

const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----\n?/g;
const pemBlocks = (pem: string): string[] => pem.match(PEM_BLOCK)?.map((block) => (block.endsWith('\n') ? block : `${block}\n`)) ?? [];

/** The hash an event's successor names as its `prev`: base64url(SHA-256(utf8(jws))). */
export const eventHashOf = (jws: string): string => createHash('sha256').update(jws, 'utf8').digest('base64url');

interface ReadJws {
  jws: string;
  header: { alg?: unknown; kid?: unknown };
  signingInput: Buffer;
  signature: Buffer;
  payload: unknown;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function readJws(payload: Buffer): ReadJws | null {
  if (payload.length > MAX_EVENT_BYTES) return null;
  const jws = payload.toString('utf8').trim();
  const parts = jws.split('.');
  if (parts.length !== 3 || !parts.every((part) => part.length > 0 && B64URL.test(part))) return null;
  const [header, body, signature] = parts as [string, string, string];
  try {
    const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    if (!head || typeof head !== 'object' || Array.isArray(head)) return null;
    return { jws, header: head as ReadJws['header'], signingInput: Buffer.from(`${header}.${body}`, 'ascii'), signature: Buffer.from(signature, 'base64url'), payload: claims };
  } catch {
    return null;
  }
}

// Shared by every app in the process, safely: keyed by the PEM text itself (not the device), whose parsed key
// never changes; a re-provisioned device's row holds a new PEM, read afresh in each run's transaction.
const keys = new LRUCache<string, KeyObject>({ max: 10_000 });
function keyOf(pem: string): KeyObject {
  let key = keys.get(pem);
  if (!key) keys.set(pem, (key = createPublicKey(pem)));
  return key;
}

/**
 * The signature with one of the device's keys (the current certificate's, or the one it renewed from), under
 * the algorithm that key takes: ES256 for P-256, ES384 for P-384, EdDSA for Ed25519, RS256 for RSA.
 */
export function verifiesWith(pem: string, alg: unknown, input: Buffer, signature: Buffer): boolean {
  return pemBlocks(pem).some((block) => verifiesWithKey(block, alg, input, signature));
}

function verifiesWithKey(pem: string, alg: unknown, input: Buffer, signature: Buffer): boolean {
  try {
    const key = keyOf(pem);
    switch (key.asymmetricKeyType) {
      case 'ec': {
        const curve = key.asymmetricKeyDetails?.namedCurve;
        if (alg === 'ES256' && curve === 'prime256v1') return verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
        if (alg === 'ES384' && curve === 'secp384r1') return verify('sha384', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
        return false;
      }
      case 'ed25519':
        return (alg === 'EdDSA' || alg === 'Ed25519') && verify(null, input, key, signature);
      case 'rsa':
        return alg === 'RS256' && verify('sha256', input, key, signature);
      default:
        return false;
    }
  } catch {
    return false;
  }
}

/** The lock an event is about, as the entry, the lock's state and the webhooks need it. */
export interface EventLock {
  lock_id: string;
  application_id: string;
  lock_name: string;
  unlock_time: number;
  door_state: 'open' | 'closed' | null;
  battery: number | null;
  alarms: string[] | null;
}

/** What an event says, whichever lock it came from (a device's signed one, a virtual lock's in-process one). */
export type LockEventInput = Pick<DeviceEvent, 'type' | 'at'> &
  Partial<Pick<DeviceEvent, 'method' | 'userId' | 'accessCodeId' | 'reason' | 'value' | 'offline'>> & {
    /** An offline code's window (epoch seconds): it names the code on its lock. */
    codeWindow?: { start: number; end: number };
    /** A device's signed event: its id and place in the chain (each logged once). */
    eventId?: string;
    seq?: number;
  };

const LOG_TYPES = {
  unlocked: 'UNLOCK',
  locked: 'LOCK',
  access_denied: 'UNLOCK',
  keypad_locked_out: 'KEYPAD_LOCKED_OUT',
  door_opened: 'DOOR_OPENED',
  door_closed: 'DOOR_CLOSED',
  battery: 'BATTERY',
  jammed: 'JAMMED',
  tampered: 'TAMPERED',
} as const satisfies Record<DeviceEvent['type'], (typeof lockActivity.$inferInsert)['type']>;

const ACCESS_TYPES = new Set<DeviceEvent['type']>(['unlocked', 'locked', 'access_denied', 'keypad_locked_out']);

const isoOf = (ms: number) => new Date(ms).toISOString();

/** A webhook an event owes, in the order it is owed. */
interface OwedWebhook {
  type: WebhookEvent;
  data: object;
}

/** What an event writes: its entry and the webhooks it owes; the lock's door / battery / alarms are moved on `lock` itself. */
interface PreparedEvent {
  entry: typeof lockActivity.$inferInsert;
  owed: OwedWebhook[];
}

type LockState = Pick<EventLock, 'door_state' | 'battery' | 'alarms'>;
const stateOf = (lock: EventLock): LockState => ({ door_state: lock.door_state, battery: lock.battery, alarms: lock.alarms ? [...lock.alarms] : lock.alarms });

/**
 * Logs one event of a lock, in `tx`: its entry (source device, at the event's own time, offline as it says,
 * method, access code, value), the lock's door / battery / alarms, and the webhooks it owes. The caller has
 * checked the event (signature, chain) or made it itself (a virtual lock).
 */
export async function logLockEvent(tx: Db, lock: EventLock, event: LockEventInput, deviceId: string | null): Promise<void> {
  const before = stateOf(lock);
  const prepared = await prepareLockEvent(tx, lock, event, deviceId);
  await tx.insert(lockActivity).values(prepared.entry);
  for (const webhook of prepared.owed) await publishEvent(tx, lock.application_id, webhook.type, webhook.data);
  await writeLockState(tx, lock, before);
}

/**
 * Writes the lock's door / battery / alarms when they differ from `before`. Only a change is written: the
 * row's update is what tells the portal's live view (and nothing else moves).
 */
async function writeLockState(tx: Db, lock: EventLock, before: LockState): Promise<void> {
  const was = before.alarms ?? [];
  const now = lock.alarms ?? [];
  const alarmsChanged = now.length !== was.length || now.some((alarm) => !was.includes(alarm));
  if (lock.door_state !== before.door_state || lock.battery !== before.battery || alarmsChanged) {
    await tx.update(locks).set({ doorState: lock.door_state, battery: lock.battery, alarms: now }).where(sql`${locks.id} = ${lock.lock_id}`);
  }
}

/** An event's entry and the webhooks it owes; moves `lock`'s door / battery / alarms on (in memory). */
async function prepareLockEvent(tx: Db, lock: EventLock, event: LockEventInput, deviceId: string | null): Promise<PreparedEvent> {
  const access = ACCESS_TYPES.has(event.type);
  const method: AccessMethod | null = access ? (event.method ?? (event.accessCodeId || event.codeWindow ? 'access_code' : null)) : null;
  const accessCodeId = access ? await accessCodeOf(tx, lock.lock_id, event) : null;
  const actor = event.userId ? await actorOf(tx, event.userId, lock.application_id) : null;
  const at = new Date(event.at);
  const rejected = event.type === 'access_denied';
  const reason = rejected ? event.reason?.trim() || deviceLogReasons.noReason : (event.reason ?? null);
  const entry: typeof lockActivity.$inferInsert = {
    lockId: lock.lock_id,
    applicationId: lock.application_id,
    type: LOG_TYPES[event.type],
    at,
    actorUserId: actor ? event.userId! : null,
    actorEmail: actor?.email ?? null,
    actorDisplayName: actor?.displayName ?? null,
    subject: accessCodeId ? await accessCodeNameOf(tx, accessCodeId) : null,
    rejected,
    reason,
    method,
    accessCodeId,
    source: 'device',
    offline: event.offline ?? false,
    eventId: event.eventId ?? null,
    deviceSeq: event.seq ?? null,
    value: event.type === 'battery' ? (event.value ?? null) : null,
  };

  const owed: OwedWebhook[] = [];
  const base: DoorEventData = { applicationId: lock.application_id, lockId: lock.lock_id, lockName: lock.lock_name, deviceId, source: 'device', offline: event.offline ?? false, at: isoOf(event.at) };
  const announce = (type: WebhookEvent, data: object) => void owed.push({ type, data: { ...base, ...data } });
  const person = { userId: actor ? event.userId! : null, email: actor?.email ?? null };
  const alarms = new Set((lock.alarms ?? []) as string[]);
  let door = lock.door_state;
  let battery = lock.battery;
  switch (event.type) {
    case 'unlocked':
      alarms.delete('jammed' satisfies LockAlarm);
      announce('lock.unlocked', { ...person, duration: lock.unlock_time, method, accessCodeId } satisfies Omit<UnlockWebhookData, keyof DoorEventData>);
      break;
    case 'locked':
      alarms.delete('jammed' satisfies LockAlarm);
      break;
    case 'access_denied':
      announce('lock.unlock_refused', { ...person, reason: reason ?? deviceLogReasons.noReason, method, accessCodeId } satisfies Omit<UnlockWebhookData, keyof DoorEventData>);
      break;
    case 'door_opened':
    case 'door_closed':
      door = event.type === 'door_opened' ? 'open' : 'closed';
      announce(event.type === 'door_opened' ? 'lock.door_opened' : 'lock.door_closed', {});
      break;
    case 'battery':
      if (event.value === undefined) break;
      battery = event.value;
      if (battery < LOW_BATTERY_LEVEL && !alarms.has('low_battery' satisfies LockAlarm)) {
        alarms.add('low_battery' satisfies LockAlarm);
        announce('device.low_battery', { battery } satisfies Omit<LowBatteryWebhookData, keyof DoorEventData>);
      } else if (battery >= LOW_BATTERY_LEVEL) {
        alarms.delete('low_battery' satisfies LockAlarm);
      }
      break;
    case 'jammed':
      alarms.add('jammed' satisfies LockAlarm);
      announce('device.jammed', {});
      break;
    case 'tampered':
      alarms.add('tampered' satisfies LockAlarm);
      announce('device.tampered', {});
      break;
    case 'keypad_locked_out':
      break;
  }
  const nextAlarms = [...alarms];
  const before = lock.alarms ?? [];
  if (nextAlarms.length !== before.length || nextAlarms.some((alarm) => !before.includes(alarm))) lock.alarms = nextAlarms;
  lock.door_state = door;
  lock.battery = battery;
  return { entry, owed };
}

/** Entries written by one statement, at most (each takes 18 parameters; a statement takes at most 65,535). */
const ENTRIES_PER_INSERT = 1_000;

/**
 * The webhooks a run of events owes, in one statement, in the order owed: each delivery's created_at (and
 * relay_after) is the transaction's time plus its place in microseconds, so the run's deliveries keep their
 * order among themselves. The next run's transaction starts later than that: its events' signatures alone
 * take longer than a microsecond each.
 */
async function publishInOrder(tx: Db, applicationId: string, owed: OwedWebhook[]): Promise<void> {
  if (owed.length === 0) return;
  const timestamp = new Date().toISOString();
  const values = owed.map(
    (webhook, place) => sql`(${place}::int, ${webhook.type}::text, ${JSON.stringify({ type: webhook.type, timestamp, data: webhook.data } satisfies WebhookPayload<object>)}::jsonb)`,
  );
  await tx.execute(sql`
    insert into ${webhookDeliveries} (webhook_id, application_id, event_type, payload, created_at, relay_after)
    select w.id, w.application_id, o.type, o.payload, now() + o.place * interval '1 microsecond', now() + o.place * interval '1 microsecond'
    from (values ${sql.join(values, sql`, `)}) as o(place, type, payload)
    join ${webhooks} w on w.application_id = ${applicationId} and w.events ? o.type
    order by o.place`);
}

/** The access code an event names: its id when it is one of the lock's codes, or the offline code its window names. */
async function accessCodeOf(tx: Db, lockId: string, event: LockEventInput): Promise<string | null> {
  if (event.accessCodeId) {
    const [row] = rowsOf<{ id: string }>(
      await tx.execute(sql`select id from access_codes where lock_id = ${lockId} and id::text = ${event.accessCodeId}`),
    );
    return row?.id ?? null;
  }
  if (event.codeWindow) {
    const [row] = rowsOf<{ id: string }>(
      await tx.execute(sql`
        select id from access_codes where lock_id = ${lockId} and kind = 'offline'
          and starts_at = to_timestamp(${event.codeWindow.start}) and ends_at = to_timestamp(${event.codeWindow.end})
        order by created_at desc limit 1`),
    );
    return row?.id ?? null;
  }
  return null;
}

async function accessCodeNameOf(tx: Db, accessCodeId: string): Promise<string | null> {
  const [row] = rowsOf<{ name: string }>(await tx.execute(sql`select name from access_codes where id = ${accessCodeId}`));
  return row?.name ?? null;
}

/** The user as the log names them: an application user of the lock's application, or a platform user (an owner); null: no such user. */
async function actorOf(tx: Db, userId: string, applicationId: string): Promise<{ email: string | null; displayName: string | null } | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(userId)) return null;
  const [row] = rowsOf<{ email: string | null; display_name: string | null }>(
    await tx.execute(sql`
      select email, display_name from application_users where id = ${userId} and application_id = ${applicationId}
      union all select email, display_name from users where id = ${userId} limit 1`),
  );
  return row ? { email: row.email, displayName: row.display_name } : null;
}

interface DeviceChainRow extends EventLock {
  certificate_public_key: string | null;
  event_seq: string | number;
  event_hash: string | null;
}

/** An event of a run that was read and names its own device: checked against the chain in the transaction. */
interface Candidate {
  place: number;
  read: ReadJws;
  parsed: ReturnType<typeof deviceEventSchema.safeParse>;
}

/** Logs a refusal (a warning and its count) and answers 'refused'. */
type Refuse = (why: EventRefusal, details?: object) => EventOutcome;

/** A run as its transaction goes: the device's row, the chain's head so far, what the run will write. */
interface RunState {
  tx: Db;
  deviceId: string;
  device: DeviceChainRow;
  publicKeys: string;
  /** Event ids already logged, then those logged in this run (lower case). */
  seen: Set<string>;
  last: number;
  hash: string | null;
  entries: (typeof lockActivity.$inferInsert)[];
  owed: OwedWebhook[];
  refuse: Refuse;
}

/**
 * The events of a run that can be read and name their own device, in order; the others' outcomes are
 * set (refused) in `outcomes`.
 */
function readCandidates(deviceId: string, payloads: readonly Buffer[], outcomes: EventOutcome[], refuse: Refuse): Candidate[] {
  const candidates: Candidate[] = [];
  payloads.forEach((payload, place) => {
    const read = readJws(payload);
    if (!read) return void (outcomes[place] = refuse('malformed'));
    // A device signs as itself: an event naming another device is refused whatever its signature.
    if (read.header.kid !== undefined && (typeof read.header.kid !== 'string' || read.header.kid.toLowerCase() !== deviceId)) {
      return void (outcomes[place] = refuse('other_device', { kid: read.header.kid }));
    }
    candidates.push({ place, read, parsed: deviceEventSchema.safeParse(read.payload) });
  });
  return candidates;
}

/** The provisioned device's chain and lock, its row locked for the transaction; undefined: no such device. */
async function lockDeviceRow(tx: Db, deviceId: string): Promise<DeviceChainRow | undefined> {
  const [device] = rowsOf<DeviceChainRow>(
    await tx.execute(sql`
      select d.certificate_public_key, d.event_seq, d.event_hash, l.id as lock_id, l.application_id, l.name as lock_name, l.unlock_time,
        l.door_state, l.battery, l.alarms
      from lock_devices d join locks l on l.id = d.lock_id
      where d.id = ${deviceId} and d.provisioned_at is not null
      for update of d`),
  );
  return device;
}

/** The run's event ids already logged (a QoS 1 redelivery, or another instance heard it first), in lower case. */
async function loggedEventIds(tx: Db, candidates: readonly Candidate[]): Promise<Set<string>> {
  const ids = candidates.flatMap(({ parsed }) => (parsed.success ? [parsed.data.eventId] : []));
  if (ids.length === 0) return new Set();
  const rows = rowsOf<{ event_id: string }>(
    await tx.execute(sql`select event_id::text as event_id from lock_activity where event_id in (${sql.join(ids.map((id) => sql`${id}`), sql`, `)})`),
  );
  return new Set(rows.map((row) => row.event_id.toLowerCase()));
}

/** The gap an event leaves in the chain after `last` / `hash`: events missing, a broken chain, or none. */
function gapOf(event: DeviceEvent, last: number, hash: string | null) {
  if (event.seq > last + 1) {
    return { kind: 'missing' as const, from: last + 1, to: event.seq - 1, reason: deviceLogReasons.eventsMissing(last + 1, event.seq - 1) };
  }
  if ((event.prev ?? null) !== hash) return { kind: 'broken' as const, from: null, to: null, reason: deviceLogReasons.chainBroken(event.seq) };
  return null;
}

/** Writes what a run logged: its entries, the webhooks in order, the lock's state and the chain's new head. */
async function writeRun(run: RunState, before: LockState): Promise<void> {
  const { tx, device, entries } = run;
  for (let from = 0; from < entries.length; from += ENTRIES_PER_INSERT) await tx.insert(lockActivity).values(entries.slice(from, from + ENTRIES_PER_INSERT));
  await publishInOrder(tx, device.application_id, run.owed);
  await writeLockState(tx, device, before);
  await tx.execute(sql`update lock_devices set event_seq = ${run.last}, event_hash = ${run.hash} where id = ${run.deviceId}`);
}

/** Checks a device's signed events and logs each once (see the top of this file). */
export class DeviceEventRecorder {
  constructor(
    private readonly db: Db,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
    /** Counts each event's outcome (the metric): logged, repeat, or the refusal's reason. */
    private readonly count: (outcome: EventOutcome | `refused_${EventRefusal}`) => void = () => {},
  ) {}

  /** An event dropped before it was read: its device has MAX_EVENTS_WAITING waiting already. */
  overflow(deviceId: string): void {
    this.log.warn({ deviceId, refusal: 'overflow' }, 'device event refused');
    this.count('refused_overflow');
  }

  async record(deviceId: string, payload: Buffer): Promise<EventOutcome> {
    return (await this.recordRun(deviceId, [payload]))[0]!;
  }

  /**
   * A run of one device's events, in the order received, in one transaction: its row locked once, each event
   * checked as record() checks it, against the chain as the events before it in the run left it; the entries
   * written together, the webhooks owed in order, the lock's door / battery / alarms and the chain's head
   * written once with where the run leaves them. The outcome of each, in order.
   */
  async recordRun(deviceId: string, payloads: readonly Buffer[]): Promise<EventOutcome[]> {
    const outcomes: EventOutcome[] = [];
    const refuse: Refuse = (why, details = {}) => {
      this.log.warn({ deviceId, refusal: why, ...details }, 'device event refused');
      this.count(`refused_${why}`);
      return 'refused';
    };
    const candidates = readCandidates(deviceId, payloads, outcomes, refuse);
    if (candidates.length > 0) await this.db.transaction((tx) => this.recordCandidates(tx, deviceId, candidates, outcomes, refuse));
    for (const outcome of outcomes) if (outcome !== 'refused') this.count(outcome);
    return outcomes;
  }

  /** The transaction of a run: the device's row locked, each candidate checked and logged, the run written. */
  private async recordCandidates(tx: Db, deviceId: string, candidates: readonly Candidate[], outcomes: EventOutcome[], refuse: Refuse): Promise<void> {
    const device = await lockDeviceRow(tx, deviceId);
    if (!device?.certificate_public_key) {
      for (const { place } of candidates) outcomes[place] = refuse('unknown_device');
      return;
    }
    const run: RunState = {
      tx,
      deviceId,
      device,
      publicKeys: device.certificate_public_key,
      seen: await loggedEventIds(tx, candidates),
      last: Number(device.event_seq),
      hash: device.event_hash ?? null,
      entries: [],
      owed: [],
      refuse,
    };
    const before = stateOf(device);
    for (const candidate of candidates) outcomes[candidate.place] = await this.recordEvent(run, candidate);
    if (run.entries.length > 0) await writeRun(run, before);
  }

  /** One event of a run: checked against the chain as the run left it; when logged, the run's head moves on. */
  private async recordEvent(run: RunState, { read, parsed }: Candidate): Promise<EventOutcome> {
    if (!verifiesWith(run.publicKeys, read.header.alg, read.signingInput, read.signature)) return run.refuse('signature', { alg: read.header.alg });
    // A time no date can hold is no event time (the schema bounds it only as an integer).
    if (!parsed.success || Number.isNaN(new Date(parsed.data.at).getTime())) return run.refuse('schema');
    const event = parsed.data;
    if (run.seen.has(event.eventId.toLowerCase())) return 'repeat';
    if (event.seq <= run.last) return run.refuse('replay', { seq: event.seq, last: run.last });
    const gap = gapOf(event, run.last, run.hash);
    if (gap) this.logGap(run, event, gap);
    const prepared = await prepareLockEvent(run.tx, run.device, event, run.deviceId);
    run.entries.push(prepared.entry);
    run.owed.push(...prepared.owed);
    run.seen.add(event.eventId.toLowerCase());
    run.last = event.seq;
    run.hash = eventHashOf(read.jws);
    return 'logged';
  }

  /** An AUDIT_GAP entry before the event that shows the gap, its webhook, and a warning. */
  private logGap(run: RunState, event: DeviceEvent, gap: NonNullable<ReturnType<typeof gapOf>>): void {
    const { device, deviceId } = run;
    run.entries.push({
      lockId: device.lock_id,
      applicationId: device.application_id,
      type: 'AUDIT_GAP',
      at: new Date(event.at),
      reason: gap.reason,
      source: 'platform',
      deviceSeq: event.seq,
    });
    run.owed.push({
      type: 'device.audit_gap',
      data: {
        applicationId: device.application_id,
        lockId: device.lock_id,
        lockName: device.lock_name,
        deviceId,
        kind: gap.kind,
        missingFrom: gap.from,
        missingTo: gap.to,
        seq: event.seq,
        reason: gap.reason,
      } satisfies AuditGapWebhookData,
    });
    this.log.warn({ deviceId, ...gap, seq: event.seq }, 'device event chain: a gap logged');
  }
}
