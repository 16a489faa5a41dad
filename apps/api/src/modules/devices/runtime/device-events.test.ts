import { createHash, createPrivateKey, randomUUID, webcrypto } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import type { MqttClient } from 'mqtt';
import { WEBHOOK_EVENTS, deviceTopic, type Lock, type LockLogEntry } from '@latchkey/contract';
import { accessCodes, lockActivity, lockDevices, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { MAX_EVENTS_WAITING } from './device-events.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { signEvent as deviceSignEvent } from '@latchkey/device';
import { connectMqtt, createCsr, deviceTls, generateDeviceKey, provisionDevice, subscribeNext, type DeviceKey, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { bearer } from '../../../../test/fixtures/platform-users.js';
import { activityCount, appUserToken, certify, createLock, createSandbox, execute, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * Events from the door, through the embedded broker over mutual TLS: a test device signs each event with
 * the key of the certificate it was provisioned with (ES256), numbers and chains it, and publishes it on
 * `…/event`. Every test has a lock and a device of its own.
 */
let t: TestApp;
let port: number;
let sandbox: Sandbox;
let alice: KeyHolder;
let lockId: string;
let device: ProvisionedDevice;
let client: MqttClient;

interface EventFields {
  type: string;
  at?: number;
  method?: string;
  userId?: string;
  accessCodeId?: string;
  reason?: string;
  value?: number;
  offline?: boolean;
}

/** A compact JWS (ES256) of `payload`, signed with `key`; `kid` names the device. */
async function signEvent(key: DeviceKey, payload: object, kid: string = device.deviceId): Promise<string> {
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid })).toString('base64url');
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.keys.privateKey, Buffer.from(`${header}.${body}`));
  return `${header}.${body}.${Buffer.from(signature).toString('base64url')}`;
}

/** A device's chain of events: each numbered one on from the last and naming its hash. */
class Chain {
  seq = 0;
  prev: string | null = null;
  constructor(private readonly key: () => DeviceKey) {}
  async next(fields: EventFields, o: { skip?: number; prev?: string | null; key?: DeviceKey; kid?: string } = {}): Promise<{ jws: string; eventId: string; seq: number }> {
    this.seq += 1 + (o.skip ?? 0);
    const eventId = randomUUID();
    const payload = { eventId, seq: this.seq, prev: o.prev !== undefined ? o.prev : this.prev, at: Date.now(), ...fields };
    const jws = await signEvent(o.key ?? this.key(), payload, o.kid);
    this.prev = createHash('sha256').update(jws).digest('base64url');
    return { jws, eventId, seq: this.seq };
  }
}
let chain: Chain;

const send = async (jws: string) => {
  await client.publishAsync(deviceTopic(device.deviceId, 'event'), jws, { qos: 1 });
  await t.app.deviceRuntime.settled();
};
const log = () => logOf(t, sandbox, lockId);
const ownerLock = async () => (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, headers: bearer(sandbox.owner.token) })).json() as Lock;
const deviceRow = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId)))[0]!;
/** The webhook deliveries of `type` about this test's lock, oldest first: their `data`. */
const deliveries = async (type: string) =>
  (
    await t.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.applicationId, sandbox.applicationId), eq(webhookDeliveries.eventType, type), sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}`))
      .orderBy(webhookDeliveries.createdAt)
  ).map((row) => (row.payload as { data: Record<string, unknown> }).data);
/** The refusals counted, by reason. */
async function refusals(): Promise<Record<string, number>> {
  const metric = await t.app.metrics.registry.getSingleMetric('latchkey_device_events_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: [...WEBHOOK_EVENTS], secret: 'whsec_dGVzdA==' });
});
beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 7 });
  await share(t, lockId, alice.userId);
  device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
  chain = new Chain(() => device.key);
});
afterEach(async () => {
  client?.end(true);
  await t.app.deviceRuntime.settled();
});
afterAll(async () => {
  await t?.close();
});

describe('a signed event', () => {
  it('is logged once, sent twice: from the device, at its own time, and the chain moves on', async () => {
    const at = Date.now() - 60_000;
    const event = await chain.next({ type: 'door_opened', at });
    await send(event.jws);
    await send(event.jws);
    const entries = await log();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ type: 'DOOR_OPENED', source: 'device', offline: false, timestamp: at / 1000, method: null, rejected: false });
    const row = await deviceRow();
    expect(row.eventSeq).toBe(1);
    expect(row.eventHash).toBe(chain.prev);
    expect((await ownerLock()).door).toBe('open');
    expect(await deliveries('lock.door_opened')).toHaveLength(1);
  });

  it('stores the public key of the certificate the device was given', async () => {
    const row = await deviceRow();
    expect(row.certificatePublicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('signed by another key is refused, logged as nothing and counted', async () => {
    const before = (await refusals()).refused_signature ?? 0;
    const stranger = await generateDeviceKey();
    await send((await chain.next({ type: 'unlocked', method: 'access_code' }, { key: stranger })).jws);
    expect(await activityCount(t, lockId)).toBe(0);
    expect((await deviceRow()).eventSeq).toBe(0);
    expect((await refusals()).refused_signature).toBe(before + 1);
  });

  it('signed with another device’s own key is refused', async () => {
    const otherLock = await createLock(t, sandbox.applicationId);
    const other = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, otherLock);
    await send((await chain.next({ type: 'door_opened' }, { key: other.key })).jws);
    expect(await activityCount(t, lockId)).toBe(0);
    expect(await activityCount(t, otherLock)).toBe(0);
  });

  it('for another device’s lock (a genuine event of another device, sent here) is refused', async () => {
    const otherLock = await createLock(t, sandbox.applicationId);
    const other = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, otherLock);
    const before = (await refusals()).refused_other_device ?? 0;
    await send((await chain.next({ type: 'door_opened' }, { key: other.key, kid: other.deviceId })).jws);
    expect(await activityCount(t, lockId)).toBe(0);
    expect(await activityCount(t, otherLock)).toBe(0);
    expect((await refusals()).refused_other_device).toBe(before + 1);
  });

  it('that is not a JWS, or not the event shape, is refused and changes nothing', async () => {
    await send('not a jws');
    await send(await signEvent(device.key, { eventId: randomUUID(), seq: 1, prev: null, at: Date.now(), type: 'exploded' }));
    await send(await signEvent(device.key, { eventId: randomUUID(), seq: 1, prev: null, at: Date.now(), type: 'battery', value: 101 }));
    await send(await signEvent(device.key, { eventId: randomUUID(), seq: 1, prev: null, at: Number.MAX_SAFE_INTEGER, type: 'door_opened' }));
    expect(await activityCount(t, lockId)).toBe(0);
    expect((await deviceRow()).eventSeq).toBe(0);
  });

  it('longer than an event can be (8 KiB) is refused unread', async () => {
    const before = (await refusals()).refused_malformed ?? 0;
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: device.deviceId, pad: 'x'.repeat(9000) })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ eventId: randomUUID(), seq: 1, prev: null, at: Date.now(), type: 'door_opened' })).toString('base64url');
    await send(`${header}.${body}.AAAA`);
    expect(await activityCount(t, lockId)).toBe(0);
    expect((await refusals()).refused_malformed).toBe(before + 1);
  });

  it('past the events a device may have waiting is dropped and counted; the next one then shows the gap', async () => {
    const waiting = (t.app.deviceRuntime as unknown as { eventsWaiting: Map<string, number> }).eventsWaiting;
    const before = (await refusals()).refused_overflow ?? 0;
    waiting.set(device.deviceId, MAX_EVENTS_WAITING);
    try {
      await client.publishAsync(deviceTopic(device.deviceId, 'event'), (await chain.next({ type: 'door_opened' })).jws, { qos: 1 });
      await expect.poll(async () => (await refusals()).refused_overflow).toBe(before + 1);
    } finally {
      waiting.delete(device.deviceId);
    }
    await send((await chain.next({ type: 'door_closed' })).jws);
    expect((await log()).map((e) => e.type)).toEqual(['DOOR_CLOSED', 'AUDIT_GAP']);
  });

  it('with a seq already passed and an unknown id (a replay or a forgery) is refused', async () => {
    await send((await chain.next({ type: 'door_opened' })).jws);
    await send((await chain.next({ type: 'door_closed' })).jws);
    const before = (await refusals()).refused_replay ?? 0;
    chain.seq = 1;
    await send((await chain.next({ type: 'door_opened' })).jws);
    expect((await log()).map((e) => e.type)).toEqual(['DOOR_CLOSED', 'DOOR_OPENED']);
    expect((await deviceRow()).eventSeq).toBe(2);
    expect((await refusals()).refused_replay).toBe(before + 1);
  });
});

describe('the device’s key', () => {
  it('an Ed25519 device’s events (EdDSA), signed by the device package’s own signer, are logged', async () => {
    const otherLock = await createLock(t, sandbox.applicationId);
    const ed = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, otherLock, 'ed25519');
    const edClient = await connectMqtt(port, { ...deviceTls(ed), clientId: ed.deviceId });
    try {
      const jws = deviceSignEvent({ eventId: randomUUID(), seq: 1, prev: null, at: Date.now(), type: 'tampered' }, createPrivateKey(ed.key.privateKeyPem), ed.deviceId);
      await edClient.publishAsync(deviceTopic(ed.deviceId, 'event'), jws, { qos: 1 });
      await t.app.deviceRuntime.settled();
      expect((await logOf(t, sandbox, otherLock)).map((e) => e.type)).toEqual(['TAMPERED']);
    } finally {
      edClient.end(true);
    }
  });

  it('after a certificate renewal: the new key’s events and those signed before with the old one are both logged; a third key’s are not', async () => {
    await t.database.db.update(lockDevices).set({ certificateNotAfter: new Date(Date.now() + 20 * 86_400_000) }).where(eq(lockDevices.id, device.deviceId));
    const before = await chain.next({ type: 'door_opened' });
    const answer = await subscribeNext(client, deviceTopic(device.deviceId, 'certificate'));
    const renewedKey = await generateDeviceKey();
    await client.publishAsync(deviceTopic(device.deviceId, 'renew'), await createCsr(renewedKey, `CN=${device.deviceId}`), { qos: 1 });
    await answer.next;
    expect((await deviceRow()).certificatePublicKey?.match(/BEGIN PUBLIC KEY/g)).toHaveLength(2);
    await send(before.jws);
    await send((await chain.next({ type: 'door_closed' }, { key: renewedKey })).jws);
    await send((await chain.next({ type: 'door_opened' }, { key: await generateDeviceKey() })).jws);
    expect((await log()).map((e) => e.type)).toEqual(['DOOR_CLOSED', 'DOOR_OPENED']);
  });
});

describe('the chain', () => {
  it('a gap: an AUDIT_GAP entry naming the missing events, then the event; device.audit_gap owed', async () => {
    await send((await chain.next({ type: 'door_opened' })).jws);
    await send((await chain.next({ type: 'door_closed' }, { skip: 2 })).jws);
    const entries = (await log()).reverse();
    expect(entries.map((e) => e.type)).toEqual(['DOOR_OPENED', 'AUDIT_GAP', 'DOOR_CLOSED']);
    expect(entries[1]!.reason).toBe('Events 2–3 from the lock are missing');
    expect((await deviceRow()).eventSeq).toBe(4);
    expect(await deliveries('device.audit_gap')).toEqual([expect.objectContaining({ kind: 'missing', missingFrom: 2, missingTo: 3, seq: 4, deviceId: device.deviceId })]);
  });

  it('a broken chain: an AUDIT_GAP entry, then the event', async () => {
    await send((await chain.next({ type: 'door_opened' })).jws);
    await send((await chain.next({ type: 'door_closed' }, { prev: 'not-the-last-hash' })).jws);
    const entries = (await log()).reverse();
    expect(entries.map((e) => e.type)).toEqual(['DOOR_OPENED', 'AUDIT_GAP', 'DOOR_CLOSED']);
    expect(entries[1]!.reason).toMatch(/does not follow on/);
    expect(await deliveries('device.audit_gap')).toEqual([expect.objectContaining({ kind: 'broken', seq: 2 })]);
  });

  it('events decided offline are logged with their own time, in seq order, marked offline', async () => {
    const start = Date.now() - 3_600_000;
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await chain.next({ type: i % 2 ? 'door_closed' : 'door_opened', at: start + i * 1000, offline: true }));
    for (const event of sent) await send(event.jws);
    const entries = (await log()).reverse();
    expect(entries.map((e) => [e.type, e.timestamp, e.offline])).toEqual([
      ['DOOR_OPENED', start / 1000, true],
      ['DOOR_CLOSED', (start + 1000) / 1000, true],
      ['DOOR_OPENED', (start + 2000) / 1000, true],
    ]);
    expect((await ownerLock()).door).toBe('open');
  });

  it('a burst of events arriving together is logged in runs: completely, in seq order, once each, a gap inside it still shown', async () => {
    const start = Date.now() - 3_600_000;
    const sent = [];
    for (let i = 0; i < 300; i++) sent.push(await chain.next({ type: i % 2 ? 'door_closed' : 'door_opened', at: start + i * 1000, offline: true }, { skip: i === 150 ? 2 : 0 }));
    const recordRun = vi.spyOn(t.app.deviceRuntime.events, 'recordRun');
    try {
      // Published together, with a few sent twice (QoS 1 redeliveries) among them.
      const burst = [...sent.slice(0, 100), ...sent.slice(90, 100), ...sent.slice(100)];
      await Promise.all(burst.map((event) => client.publishAsync(deviceTopic(device.deviceId, 'event'), event.jws, { qos: 1 })));
      await expect.poll(async () => (await deviceRow()).eventSeq, { timeout: 30_000 }).toBe(sent.at(-1)!.seq);
      await t.app.deviceRuntime.settled();
      // Fewer transactions than events: the ones waiting together were taken together.
      expect(recordRun.mock.calls.flatMap(([, payloads]) => payloads)).toHaveLength(burst.length);
      expect(recordRun.mock.calls.length).toBeLessThan(burst.length);
    } finally {
      recordRun.mockRestore();
    }
    const entries = await t.database.db
      .select({ type: lockActivity.type, seq: lockActivity.deviceSeq, eventId: lockActivity.eventId, reason: lockActivity.reason })
      .from(lockActivity)
      .where(eq(lockActivity.lockId, lockId))
      .orderBy(lockActivity.at, lockActivity.seq);
    const expected = sent.flatMap((event, i) => [
      ...(i === 150 ? [{ type: 'AUDIT_GAP', seq: event.seq, eventId: null, reason: `Events ${event.seq - 2}–${event.seq - 1} from the lock are missing` }] : []),
      { type: i % 2 ? 'DOOR_CLOSED' : 'DOOR_OPENED', seq: event.seq, eventId: event.eventId, reason: null },
    ]);
    expect(entries).toEqual(expected);
    expect((await deviceRow()).eventHash).toBe(chain.prev);
    expect((await ownerLock()).door).toBe('closed');
    // The webhooks owed, in the order owed.
    const owed = await t.database.db
      .select({ type: webhookDeliveries.eventType, payload: webhookDeliveries.payload })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.applicationId, sandbox.applicationId), sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}`))
      .orderBy(webhookDeliveries.createdAt);
    expect(owed.map(({ type, payload }) => [type, (payload as { data: { at?: string; seq?: number } }).data.at ?? (payload as { data: { seq?: number } }).data.seq])).toEqual(
      sent.flatMap((event, i) => [
        ...(i === 150 ? [['device.audit_gap', event.seq]] : []),
        [i % 2 ? 'lock.door_closed' : 'lock.door_opened', new Date(start + i * 1000).toISOString()],
      ]),
    );
  });
});

describe('what events log and announce', () => {
  it('a keypad unlock: UNLOCK by access code, lock.unlocked with method, code and source', async () => {
    const [code] = await t.database.db.insert(accessCodes).values({ lockId, applicationId: sandbox.applicationId, name: 'Cleaner', kind: 'online', sealedCode: 'sealed' }).returning();
    await send((await chain.next({ type: 'unlocked', method: 'access_code', accessCodeId: code!.id })).jws);
    const [entry] = await log();
    expect(entry).toMatchObject<Partial<LockLogEntry>>({ type: 'UNLOCK', method: 'access_code', accessCodeId: code!.id, source: 'device', subject: 'Cleaner', rejected: false });
    expect(await deliveries('lock.unlocked')).toEqual([
      expect.objectContaining({ lockId, method: 'access_code', accessCodeId: code!.id, source: 'device', offline: false, deviceId: device.deviceId, userId: null }),
    ]);
  });

  it('an unlock by a user names them; access_denied is a refused UNLOCK with its reason and lock.unlock_refused', async () => {
    await send((await chain.next({ type: 'unlocked', method: 'local', userId: alice.userId })).jws);
    await send((await chain.next({ type: 'access_denied', method: 'access_code', reason: 'Unknown code' })).jws);
    const [denied, unlocked] = await log();
    expect(unlocked).toMatchObject({ type: 'UNLOCK', method: 'local', actor: { userId: alice.userId, email: 'alice@example.com' } });
    expect(denied).toMatchObject({ type: 'UNLOCK', rejected: true, reason: 'Unknown code', method: 'access_code', source: 'device' });
    expect(await deliveries('lock.unlock_refused')).toEqual([expect.objectContaining({ reason: 'Unknown code', method: 'access_code', source: 'device', accessCodeId: null })]);
  });

  it('a keypad lockout is KEYPAD_LOCKED_OUT; locked is LOCK', async () => {
    await send((await chain.next({ type: 'keypad_locked_out', method: 'access_code', reason: 'Too many wrong codes' })).jws);
    await send((await chain.next({ type: 'locked' })).jws);
    expect((await log()).map((e) => e.type)).toEqual(['LOCK', 'KEYPAD_LOCKED_OUT']);
  });

  it('battery: its value logged and shown; device.low_battery once per crossing below 20', async () => {
    for (const value of [15, 10, 50, 12]) await send((await chain.next({ type: 'battery', value })).jws);
    expect((await log()).map((e) => [e.type, e.value])).toEqual([
      ['BATTERY', 12],
      ['BATTERY', 50],
      ['BATTERY', 10],
      ['BATTERY', 15],
    ]);
    expect((await deliveries('device.low_battery')).map((d) => d.battery)).toEqual([15, 12]);
    const lock = await ownerLock();
    expect(lock.battery).toBe(12);
    expect(lock.alarms).toEqual(['low_battery']);
  });

  it('jammed and tampered raise alarms and their webhooks; the bolt moving clears jammed', async () => {
    await send((await chain.next({ type: 'jammed' })).jws);
    await send((await chain.next({ type: 'tampered' })).jws);
    expect((await ownerLock()).alarms?.sort()).toEqual(['jammed', 'tampered']);
    expect(await deliveries('device.jammed')).toEqual([expect.objectContaining({ deviceId: device.deviceId, source: 'device' })]);
    expect(await deliveries('device.tampered')).toHaveLength(1);
    await send((await chain.next({ type: 'locked' })).jws);
    expect((await ownerLock()).alarms).toEqual(['tampered']);
    expect((await log()).map((e) => e.type)).toEqual(['LOCK', 'TAMPERED', 'JAMMED']);
  });

  it('the lock page’s live events carry the entry and the lock’s new door state', async () => {
    const seen: { event: string; data: string }[] = [];
    const stop = t.app.liveEvents.subscribe(sandbox.applicationId, (event) => seen.push(event));
    try {
      await send((await chain.next({ type: 'door_opened' })).jws);
      const live = async () => seen.some((e) => e.event === 'activity' && (JSON.parse(e.data) as LockLogEntry).type === 'DOOR_OPENED') && seen.some((e) => e.event === 'lock' && (JSON.parse(e.data) as Lock).door === 'open');
      await expect.poll(live).toBe(true);
    } finally {
      stop();
    }
  });
});

describe('an unlock through the cloud on a device-backed lock', () => {
  it('is logged by the platform with its method, and announced with method and source', async () => {
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.announced();
    const op = await subscribeNext(client, deviceTopic(device.deviceId, 'op'));
    const answered = op.next.then(async (payload) => {
      const { requestId } = JSON.parse(payload.toString()) as { requestId: string };
      await client.publishAsync(deviceTopic(device.deviceId, 'result'), JSON.stringify({ requestId, outcome: 'DONE' }), { qos: 1 });
    });
    const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: false }));
    await answered;
    expect(res.statusCode, res.body).toBe(204);
    expect((await log())[0]).toMatchObject({ type: 'UNLOCK', method: 'mobile_key', source: 'platform', offline: false });
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'mobile_key', source: 'platform', accessCodeId: null })]);
  });
});
