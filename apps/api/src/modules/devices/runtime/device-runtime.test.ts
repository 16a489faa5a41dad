import { X509Certificate, randomUUID, verify } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import type { MqttClient } from 'mqtt';
import {
  MAX_DEVICE_MESSAGE_BYTES,
  deviceConfigSchema,
  deviceErrors,
  deviceOperationMessageSchema,
  deviceTopic,
  type DeviceConfig,
  type Lock,
  type SdkLock,
} from '@latchkey/contract';
import { applicationOwners, lockDevices, lockShares, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { bearer, createOwner } from '../../../../test/fixtures/platform-users.js';
import {
  activityCount,
  appUserToken,
  certify,
  createLock,
  createSandbox,
  execute,
  logOf,
  share,
  signOperation,
  type KeyHolder,
  type Sandbox,
} from '../../../../test/fixtures/operations.js';
import { deviceLogReasons } from '@latchkey/contract';
import { EmbeddedBus } from '../../../plugins/mqtt/embedded.js';
import type { BridgedMessage, BrokerBridge } from '../../../plugins/mqtt/bridge.js';

/**
 * A real lock's side of the conversation, through the embedded broker over mutual TLS: a test "device" is
 * an MQTT client with the certificate it was provisioned with. Presence, state, results and configs, and
 * operations relayed through POST /device/{lockId}/execute. Every test has a lock and a device of its own,
 * so that none depends on what another left behind (they pass in any order).
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let alice: KeyHolder;
let device: ProvisionedDevice;
let client: MqttClient;
let inbox: Inbox;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

/** What the device receives, topic by topic, in order; `next` waits for the next one not yet taken. */
interface Inbox {
  next(topic: string): Promise<Buffer>;
}
function inboxOf(mqttClient: MqttClient): Inbox {
  const queued = new Map<string, Buffer[]>();
  const waiting = new Map<string, ((payload: Buffer) => void)[]>();
  mqttClient.on('message', (topic, payload) => {
    const waiter = waiting.get(topic)?.shift();
    if (waiter) waiter(payload);
    else queued.set(topic, [...(queued.get(topic) ?? []), payload]);
  });
  return {
    next: (topic) => {
      const ready = queued.get(topic)?.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.set(topic, [...(waiting.get(topic) ?? []), resolve]));
    },
  };
}

/** Resolves with the first `lock` live event of the application that `match` accepts. */
function lockEvent(match: (lock: Lock) => boolean): Promise<Lock> {
  return new Promise((resolve) => {
    const stop = t.app.liveEvents.subscribe(sandbox.applicationId, (event) => {
      if (event.event !== 'lock') return;
      const lock = JSON.parse(event.data) as Lock;
      if (lock.id !== lockId || !match(lock)) return;
      stop();
      resolve(lock);
    });
  });
}

const topic = (kind: Parameters<typeof deviceTopic>[1]) => deviceTopic(device.deviceId, kind);
const publish = async (kind: Parameters<typeof deviceTopic>[1], payload: unknown, retain = false) => {
  await client.publishAsync(topic(kind), typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1, retain });
  await t.app.deviceRuntime.settled();
};
const ownerLock = async () => (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, headers: bearer(sandbox.owner.token) })).json() as Lock;
const deviceRow = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId)))[0]!;
/** The application's webhook deliveries of `type`: all of them, or (`ofThisLock`) those about this test's lock. */
const deliveries = async (type: string, ofThisLock = true) =>
  (
    await t.database.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.applicationId, sandbox.applicationId),
          eq(webhookDeliveries.eventType, type),
          ofThisLock ? sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}` : undefined,
        ),
      )
  ).length;

/** The config's payload, after checking its signature against the platform CA certificate in its x5c. */
function readConfig(jws: Buffer): DeviceConfig {
  const [header, payload, signature] = jws.toString().split('.') as [string, string, string];
  const { alg, x5c } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; x5c: string[] };
  expect(alg).toBe('EdDSA');
  expect(x5c).toEqual([t.app.platformCa.certificateBase64]);
  const ca = new X509Certificate(Buffer.from(x5c[0]!, 'base64'));
  expect(verify(null, Buffer.from(`${header}.${payload}`), ca.publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  return deviceConfigSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString()));
}

/** The device's answer to the next operation it receives; resolves with what it received. */
async function answerNext(result: (requestId: string) => unknown): Promise<{ requestId: string; jws: string }> {
  const message = deviceOperationMessageSchema.parse(JSON.parse((await inbox.next(topic('op'))).toString()));
  await publish('result', result(message.requestId));
  return message;
}

let port: number;
beforeAll(async () => {
  // Long enough for a loaded host to carry six answers in turn; the no-answer case waits it out once.
  t = await createTestApp({ DEVICE_TIMEOUT_SECONDS: '3', MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: ['device.online', 'device.offline'], secret: 'whsec_dGVzdA==' });
});
beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 7 });
  await share(t, lockId, alice.userId);
  device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId, will: { topic: deviceTopic(device.deviceId, 'presence'), payload: Buffer.from('offline'), qos: 1, retain: true } });
  inbox = inboxOf(client);
  await client.subscribeAsync([topic('op'), topic('config')], { qos: 1 });
  await t.app.deviceRuntime.settled();
});
afterEach(async () => {
  client?.end(true);
  await t.app.deviceRuntime.settled();
});
afterAll(async () => {
  await t?.close();
});

/** The device says it is online and takes the first config it is sent, as a device that has just started. */
async function online(): Promise<DeviceConfig> {
  await publish('presence', 'online', true);
  const config = readConfig(await inbox.next(topic('config')));
  await t.app.deviceRuntime.settled();
  return config;
}

describe('presence', () => {
  it('online: the lock shows connected, its live view hears it, device.online is owed once, and the device gets its signed config', async () => {
    const seen = lockEvent((lock) => lock.device?.connected === true);
    await publish('presence', 'online', true);
    const live = await seen;
    expect(live.state.connected).toBe(true);
    const lock = await ownerLock();
    expect(lock.device).toMatchObject({ deviceId: device.deviceId, provisioned: true, connected: true });
    expect(lock.device!.lastSeen).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(lock.state).toMatchObject({ connected: true, locked: true });
    expect(await deliveries('device.online')).toBe(1);

    const config = readConfig(await inbox.next(topic('config')));
    expect(config).toMatchObject({ lockId, unlockTime: 7, usageRequirements: {} });
    expect(config.version).toBeGreaterThanOrEqual(1);
    expect(config.users).toEqual(
      expect.arrayContaining([
        { userId: sandbox.owner.userId, publicKey: expect.any(String), role: 'ADMIN', start: null, end: null },
        { userId: alice.userId, publicKey: '', role: 'USER', start: null, end: null, timeWindow: null },
      ]),
    );

    await publish('presence', 'online', true);
    expect(await deliveries('device.online')).toBe(1);
  });

  it('state: firmware and the reported lock state are kept, and the live view shows it', async () => {
    await online();
    const seen = lockEvent((lock) => lock.state.locked === false);
    await publish('state', { locked: false, firmware: 'pi-relay 1.2.0', at: new Date().toISOString(), directAccessEndpoints: ['http://192.168.1.20:8080/execute'] }, true);
    await seen;
    expect((await ownerLock()).device!.firmware).toBe('pi-relay 1.2.0');
    const sdk = (await t.app.inject({ method: 'GET', url: `/api/device/${lockId}`, headers: { ...bearer(alice.token), accept: 'application/vnd.doordeck.api-v3+json' } })).json() as SdkLock;
    expect(sdk.state).toEqual({ locked: false, connected: true });
    expect(sdk.settings.directAccessEndpoints).toEqual(['http://192.168.1.20:8080/execute']);
    expect(sdk.lastSeen).toBeGreaterThan(Date.now() / 1000 - 60);
    await publish('state', { locked: true, firmware: 'pi-relay 1.2.0', at: new Date().toISOString() }, true);
  });

  it('a presence of an id that is no provisioned device changes nothing', async () => {
    await online();
    expect(await deliveries('device.online')).toBe(1);
    const before = await deliveries('device.online', false);
    const stranger = randomUUID();
    await t.app.deviceBus.publish(deviceTopic(stranger, 'presence'), 'online');
    await t.app.deviceRuntime.settled();
    expect(await deliveries('device.online')).toBe(1);
    expect(await deliveries('device.online', false)).toBe(before);
  });
});

describe('operations on a device-backed lock', () => {
  beforeEach(online);

  it('are handed to the device exactly as signed; DONE → 204, logged as the device’s doing, the state following the device', async () => {
    const jws = signOperation(alice, lockId, UNLOCK);
    const answered = execute(t, lockId, alice.token, jws);
    const received = await answerNext((requestId) => ({ requestId, outcome: 'DONE', state: { locked: false } }));
    expect(received.jws).toBe(jws);
    const res = await answered;
    expect(res.statusCode, res.body).toBe(204);
    const [entry] = await logOf(t, sandbox, lockId);
    expect(entry).toMatchObject({ type: 'UNLOCK', rejected: false, subject: '7 s', reason: deviceLogReasons.done, actor: { userId: alice.userId } });
    expect((await ownerLock()).state).toMatchObject({ locked: false, connected: true, unlockedUntil: null });
  });

  it('a repeated unlock on the standing this instance kept is refused once the share is revoked anywhere, and never reaches the device', async () => {
    const dave = await certify(t, await appUserToken(sandbox, 'dave', 'dave@example.com'));
    await share(t, lockId, dave.userId);
    const first = execute(t, lockId, dave.token, signOperation(dave, lockId, UNLOCK));
    await answerNext((requestId) => ({ requestId, outcome: 'DONE' }));
    expect((await first).statusCode).toBe(204);
    // Revoked behind this instance's back (another instance, or SQL): the kept standing must not open the door.
    await t.database.db.delete(lockShares).where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, dave.userId)));
    const before = await activityCount(t, lockId);
    const refused = await execute(t, lockId, dave.token, signOperation(dave, lockId, UNLOCK));
    expect(refused.statusCode).toBe(403);
    expect(await activityCount(t, lockId)).toBe(before + 1);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, actor: { userId: dave.userId } });
    // The next operation the device receives is alice's, sent after the refused one.
    const good = signOperation(alice, lockId, UNLOCK);
    const answered = execute(t, lockId, alice.token, good);
    expect((await answerNext((requestId) => ({ requestId, outcome: 'DONE' }))).jws).toBe(good);
    expect((await answered).statusCode).toBe(204);
  });

  it('unlocks arriving together are each handed to the device and each logged once; the state follows the last answer', async () => {
    const before = await activityCount(t, lockId);
    const burst = Array.from({ length: 6 }, () => execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK)));
    for (let i = 0; i < burst.length; i++) await answerNext((requestId) => ({ requestId, outcome: 'DONE', state: { locked: i < burst.length - 1 } }));
    expect((await Promise.all(burst)).map((r) => r.statusCode)).toEqual(Array(6).fill(204));
    expect(await activityCount(t, lockId)).toBe(before + 6);
    const entries = (await logOf(t, sandbox, lockId)).slice(0, 6);
    expect(entries.every((e) => e.type === 'UNLOCK' && !e.rejected && e.reason === deviceLogReasons.done)).toBe(true);
    // The outcomes are written in the order the answers came: the last said unlocked.
    expect((await deviceRow()).state).toMatchObject({ locked: false });
  });

  it('REFUSED → 403 with the device’s reason, one entry saying the device refused', async () => {
    const before = await activityCount(t, lockId);
    const answered = execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    await answerNext((requestId) => ({ requestId, outcome: 'REFUSED', reason: 'Outside the lock’s hours' }));
    const res = await answered;
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 403, message: 'Outside the lock’s hours' });
    expect(await activityCount(t, lockId)).toBe(before + 1);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'UNLOCK', rejected: true, reason: deviceLogReasons.refused('Outside the lock’s hours') });
  });

  it('no answer in time → 504; a result that comes later, or for a request never sent, changes nothing', async () => {
    const answered = execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    const late = deviceOperationMessageSchema.parse(JSON.parse((await inbox.next(topic('op'))).toString()));
    const res = await answered;
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual({ code: 504, message: deviceErrors.noAnswer });
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, reason: deviceErrors.noAnswer });

    const count = await activityCount(t, lockId);
    const row = await deviceRow();
    await publish('result', { requestId: late.requestId, outcome: 'DONE', state: { locked: false } });
    await publish('result', { requestId: randomUUID(), outcome: 'DONE', state: { locked: false } });
    expect(await activityCount(t, lockId)).toBe(count);
    expect((await deviceRow()).state).toEqual(row.state);
  });

  it('the device’s answer is carried out without waiting for the broker to confirm the operation (with peers, a commit of its own)', async () => {
    const bus = t.app.deviceBus;
    const publishHere = bus.publish.bind(bus);
    let confirm = () => {};
    // The broker sends the operation on to the device, and confirms only when the test says so.
    const held = vi.spyOn(bus, 'publish').mockImplementation(async (...args) => {
      await publishHere(...args);
      await new Promise<void>((resolve) => (confirm = resolve));
    });
    try {
      const answered = execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
      await answerNext((requestId) => ({ requestId, outcome: 'DONE', state: { locked: false } }));
      const res = await answered;
      expect(res.statusCode, res.body).toBe(204);
      expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'UNLOCK', rejected: false, reason: deviceLogReasons.done });
    } finally {
      held.mockRestore();
      confirm();
    }
  });

  it('a device’s answer to an operation this instance sent is not sent on to the other instances; any other answer is', async () => {
    const bus = t.app.deviceBus as EmbeddedBus;
    expect(bus).toBeInstanceOf(EmbeddedBus);
    const peers = (bus as unknown as { peers: BrokerBridge | null }).peers;
    const forwarded: string[] = [];
    // The other instances, as this broker's bridge: what it sends them is recorded.
    bus.bridge({ forward: async (message: BridgedMessage) => void forwarded.push(`${message.topic} ${message.payload.toString()}`) } as unknown as BrokerBridge);
    try {
      const answered = execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
      const { requestId } = await answerNext((id) => ({ requestId: id, outcome: 'DONE', state: { locked: false } }));
      expect((await answered).statusCode).toBe(204);
      // An answer to no request of this instance's (another instance's, say) comes after it, in order.
      const stranger = randomUUID();
      await publish('result', { requestId: stranger, outcome: 'DONE' });
      await vi.waitFor(() => expect(forwarded.some((m) => m.includes(stranger))).toBe(true), { timeout: 10_000 });
      expect(forwarded.filter((m) => m.startsWith(topic('result')) && m.includes(requestId))).toEqual([]);
    } finally {
      bus.bridge(peers as BrokerBridge);
    }
  });

  it('an operation the broker does not take → 503 as offline at once, logged once, with no answer waited for', async () => {
    const refused = vi.spyOn(t.app.deviceBus, 'publish').mockRejectedValueOnce(new Error('broker closed'));
    try {
      const before = await activityCount(t, lockId);
      const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ code: 503, message: deviceErrors.offline });
      expect(await activityCount(t, lockId)).toBe(before + 1);
      expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, reason: deviceErrors.offline });
    } finally {
      refused.mockRestore();
    }
  });

  it('a bad operation is refused before it reaches the device, and a replay too', async () => {
    const expired = signOperation(alice, lockId, UNLOCK, { iat: Math.floor(Date.now() / 1000) - 600, nbf: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 540 });
    expect((await execute(t, lockId, alice.token, expired)).statusCode).toBe(403);
    const otherLock = signOperation(alice, randomUUID(), UNLOCK);
    expect((await execute(t, lockId, alice.token, otherLock)).statusCode).toBe(403);

    const good = signOperation(alice, lockId, UNLOCK);
    const answered = execute(t, lockId, alice.token, good);
    // The first operation the device receives after the refused ones is the good one.
    expect((await answerNext((requestId) => ({ requestId, outcome: 'DONE' }))).jws).toBe(good);
    expect((await answered).statusCode).toBe(204);
    expect((await execute(t, lockId, alice.token, good)).statusCode).toBe(409);
  });

  it('ADD_USER done by the device makes the share, and the device gets a config naming the new user', async () => {
    const owner = await certify(t, sandbox.owner.token);
    const bob = await certify(t, await appUserToken(sandbox, 'bob', 'bob@example.com'));
    const answered = execute(t, lockId, owner.token, signOperation(owner, lockId, { type: 'ADD_USER', user: bob.userId, role: 'USER' }));
    await answerNext((requestId) => ({ requestId, outcome: 'DONE' }));
    expect((await answered).statusCode).toBe(204);
    const [made] = await t.database.db.select().from(lockShares).where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, bob.userId)));
    expect(made).toBeDefined();
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SHARE', rejected: false, reason: deviceLogReasons.done });
    let config = readConfig(await inbox.next(topic('config')));
    while (!config.users.some((u) => u.userId === bob.userId)) config = readConfig(await inbox.next(topic('config')));
    const ownerEntry = config.users.find((u) => u.userId === sandbox.owner.userId)!;
    expect(Buffer.from(ownerEntry.publicKey, 'base64')).toEqual(owner.publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
  });
});

describe('config', () => {
  beforeEach(online);

  it('is published again, with a higher version, after a share is added by any path and after the settings change', async () => {
    await t.app.deviceRuntime.settled();
    const { configVersion } = await deviceRow();
    const carol = await certify(t, await appUserToken(sandbox, 'carol'));
    await share(t, lockId, carol.userId, { role: 'ADMIN' });
    const shared = readConfig(await inbox.next(topic('config')));
    expect(shared.version).toBeGreaterThan(configVersion);
    expect(shared.users).toContainEqual(expect.objectContaining({ userId: carol.userId, role: 'ADMIN' }));

    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`,
      headers: bearer(sandbox.owner.token),
      payload: { settings: { unlockTime: 12 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const changed = readConfig(await inbox.next(topic('config')));
    expect(changed.version).toBeGreaterThan(shared.version);
    expect(changed.unlockTime).toBe(12);
  });
});

describe('config after an owner change', () => {
  beforeEach(online);

  it('names a new owner as ADMIN, and drops one removed: the lock decides alone from it when the cloud is away', async () => {
    await t.app.deviceRuntime.settled();
    const colleague = await createOwner(t);
    await t.database.db.insert(applicationOwners).values({ applicationId: sandbox.applicationId, userId: colleague.userId });
    const added = readConfig(await inbox.next(topic('config')));
    expect(added.users).toContainEqual(expect.objectContaining({ userId: colleague.userId, role: 'ADMIN', start: null, end: null }));

    await t.database.db.delete(applicationOwners).where(and(eq(applicationOwners.applicationId, sandbox.applicationId), eq(applicationOwners.userId, colleague.userId)));
    const removed = readConfig(await inbox.next(topic('config')));
    expect(removed.version).toBeGreaterThan(added.version);
    expect(removed.users.map((u) => u.userId)).not.toContain(colleague.userId);
  });
});

describe('what a device sends that is not the contract', () => {
  beforeEach(online);

  it('malformed or oversized state and results change nothing', async () => {
    await t.app.deviceRuntime.settled();
    const row = await deviceRow();
    const count = await activityCount(t, lockId);
    await publish('state', '{"locked":"yes","firmware":"x","at":"now"}');
    await publish('state', 'not json');
    await publish('result', { requestId: '', outcome: 'MAYBE' });
    await publish('presence', 'sleeping');
    await t.app.deviceBus.publish(topic('state'), Buffer.alloc(MAX_DEVICE_MESSAGE_BYTES + 1, 0x20));
    await t.app.deviceRuntime.settled();
    const after = await deviceRow();
    expect({ state: after.state, firmware: after.firmware, connected: after.connected }).toEqual({ state: row.state, firmware: row.firmware, connected: row.connected });
    expect(await activityCount(t, lockId)).toBe(count);
  });
});

describe('a sandbox lock that gets a device', () => {
  it('is the device’s to open from then on, even for a caller whose sandbox unlock was just accepted', async () => {
    const other = await createLock(t, sandbox.applicationId);
    await share(t, other, alice.userId);
    expect((await execute(t, other, alice.token, signOperation(alice, other, UNLOCK))).statusCode).toBe(204);
    await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, other);
    const res = await execute(t, other, alice.token, signOperation(alice, other, UNLOCK));
    expect(res.statusCode).toBe(503);
    const lock = (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${other}`, headers: bearer(sandbox.owner.token) })).json() as Lock;
    expect(lock.state).toEqual({ locked: true, connected: false, unlockedUntil: null });
    expect(lock.device).toMatchObject({ provisioned: true, connected: false, lastSeen: null });
  });
});

describe('offline', () => {
  beforeEach(online);

  it('the Last Will makes the lock offline (device.offline owed); an operation is then 503 and never published', async () => {
    const seen = lockEvent((lock) => lock.device?.connected === false);
    client.stream.destroy();
    await seen;
    // Announced once the presence has held (at once after a quiet spell, else within DEVICE_PRESENCE_SETTLE_S).
    await t.app.deviceRuntime.announced();
    expect(await deliveries('device.offline')).toBe(1);
    expect((await ownerLock()).state.connected).toBe(false);

    const offline = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    expect(offline.statusCode).toBe(503);
    expect(offline.json()).toEqual({ code: 503, message: deviceErrors.offline });
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, reason: deviceErrors.offline });

    // Back online: the first operation the device gets is the one sent after it returned.
    client = await connectMqtt(t.app.mqtt.port!, { ...deviceTls(device), clientId: device.deviceId });
    inbox = inboxOf(client);
    await client.subscribeAsync(topic('op'), { qos: 1 });
    await publish('presence', 'online', true);
    const good = signOperation(alice, lockId, UNLOCK);
    const answered = execute(t, lockId, alice.token, good);
    expect((await answerNext((requestId) => ({ requestId, outcome: 'DONE' }))).jws).toBe(good);
    expect((await answered).statusCode).toBe(204);
  });
});
