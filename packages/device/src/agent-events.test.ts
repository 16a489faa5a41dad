import { X509Certificate, createHash, verify } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deviceEventSchema, type DeviceEvent } from '@latchkey/contract';
import { hashAccessCode } from './access-codes.js';
import { VirtualActuator } from './actuators.js';
import { DeviceAgent, type Logger } from './agent.js';
import { observe, provisionedState, startBroker, type Broker } from './broker-fixture.js';
import type { StateDir } from './state-dir.js';
import { createDeviceCa, createTestCa, signConfig, testConfig, type TestCa } from './test-fixture.js';

/** The agent's signed event chain: what it publishes on …/event, keeps on disk, and delivers after a time offline. */

let platformCa: TestCa;
let deviceCa: TestCa;
const SALT = 'c2FsdHNhbHRzYWx0c2FsdA';
const quiet: Logger = { info: () => undefined, warn: () => undefined };
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
beforeAll(async () => {
  [platformCa, deviceCa] = await Promise.all([createTestCa(), createDeviceCa()]);
});

async function device(mqttUrl: string) {
  const made = await provisionedState(mqttUrl, { platformCa, deviceCa });
  cleanup.push(() => rm(made.dir, { recursive: true, force: true }));
  const config = testConfig(made.lockId, [], { version: 4, accessCodeSalt: SALT, accessCodes: [{ accessCodeId: 'front', hash: hashAccessCode(SALT, '246810'), start: null, end: null }] });
  await made.state.write('config', signConfig(platformCa, config));
  return made;
}

async function startAgent(state: StateDir, extra: Partial<Parameters<typeof DeviceAgent.start>[0]> = {}) {
  const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'test-1.0', log: quiet, reconnectMs: 50, maxReconnectMs: 200, ...extra });
  let stopped = false;
  cleanup.push(() => (stopped ? Promise.resolve() : agent.stop()));
  return { agent, stop: async () => ((stopped = true), await agent.stop()) };
}

/** Checks a published event as the platform does: the signature with the certificate's key, the header, the payload's shape. */
function verified(jws: string, certificatePem: string, deviceId: string): DeviceEvent {
  const [head, body, signature] = jws.split('.') as [string, string, string];
  expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'ES256', typ: 'JWT', kid: deviceId });
  const key = new X509Certificate(certificatePem).publicKey;
  expect(verify('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(true);
  return deviceEventSchema.parse(JSON.parse(Buffer.from(body, 'base64url').toString()));
}
const hashOf = (jws: string) => createHash('sha256').update(jws, 'utf8').digest('base64url');

/** Asserts the events form one chain from `firstSeq`, each following on from the one before. */
function expectChain(jwss: string[], events: DeviceEvent[], firstSeq: number, prevOfFirst: string | null) {
  events.forEach((event, i) => {
    expect(event.seq).toBe(firstSeq + i);
    expect(event.prev).toBe(i === 0 ? prevOfFirst : hashOf(jwss[i - 1]!));
  });
}

describe('DeviceAgent events', () => {
  let broker: Broker;
  beforeAll(async () => {
    broker = await startBroker();
    return () => broker.close();
  });

  it('signs each event with its certificate’s key (ES256, kid = deviceId), chains them from seq 1, and publishes them on …/event', async () => {
    const lock = await device(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, lock.prefix);
    cleanup.push(() => platform.client.endAsync());
    const { agent } = await startAgent(lock.state);
    await platform.next('presence');

    expect(await agent.enterCode('246810')).toEqual({ outcome: 'DONE', accessCodeId: 'front' });
    expect(await agent.enterCode('111111')).toMatchObject({ outcome: 'REFUSED' });
    expect(agent.reportSensor({ type: 'door_opened' })).toBe(true);
    expect(agent.reportSensor({ type: 'battery', value: 64 })).toBe(true);
    await platform.next('event', () => platform.seen.filter((m) => m.topic === `${lock.prefix}/event`).length === 4);
    const jwss = platform.seen.filter((m) => m.topic === `${lock.prefix}/event`).map((m) => m.text);
    const events = jwss.map((jws) => verified(jws, lock.certificatePem, lock.deviceId));
    expectChain(jwss, events, 1, null);
    expect(events.map(({ type, method, accessCodeId, value, offline }) => ({ type, method, accessCodeId, value, offline }))).toEqual([
      { type: 'unlocked', method: 'access_code', accessCodeId: 'front', value: undefined, offline: undefined },
      { type: 'access_denied', method: 'access_code', accessCodeId: undefined, value: undefined, offline: undefined },
      { type: 'door_opened', method: undefined, accessCodeId: undefined, value: undefined, offline: undefined },
      { type: 'battery', method: undefined, accessCodeId: undefined, value: 64, offline: undefined },
    ]);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(4);
    // Delivered: nothing waits on disk.
    await expect.poll(() => lock.state.read('events')).toBeNull();
  });

  it('continues its chain after a restart', async () => {
    const lock = await device(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, lock.prefix);
    cleanup.push(() => platform.client.endAsync());
    const first = await startAgent(lock.state);
    await platform.next('presence');
    first.agent.reportSensor({ type: 'door_opened' });
    first.agent.reportSensor({ type: 'door_closed' });
    const second = await platform.next('event', (t) => verified(t, lock.certificatePem, lock.deviceId).seq === 2);
    await first.stop();

    const { agent } = await startAgent(lock.state);
    agent.reportSensor({ type: 'tampered' });
    const third = verified(await platform.next('event', (t) => verified(t, lock.certificatePem, lock.deviceId).seq === 3), lock.certificatePem, lock.deviceId);
    expect(third).toMatchObject({ seq: 3, prev: hashOf(second), type: 'tampered' });
    expect((await stat(lock.state.file('eventChain'))).mode & 0o777).toBe(0o600);
  });
});

describe('DeviceAgent events while the platform is away', () => {
  it('has each event on disk before publishing, marks it offline, and delivers them in order once connected', async () => {
    const lock = await device('mqtt://127.0.0.1:1');
    const offline = await startAgent(lock.state);
    await offline.agent.enterCode('246810');
    offline.agent.reportSensor({ type: 'door_opened' });
    offline.agent.reportSensor({ type: 'door_closed' });
    await offline.stop();
    const kept = (await readFile(lock.state.file('events'), 'utf8')).split('\n').filter(Boolean);
    expect(kept).toHaveLength(3);

    const broker = await startBroker();
    cleanup.push(() => broker.close());
    const identity = JSON.parse((await lock.state.read('identity'))!) as Record<string, string>;
    await lock.state.write('identity', JSON.stringify({ ...identity, mqttUrl: `mqtt://127.0.0.1:${broker.port}` }));
    const published: string[] = [];
    broker.aedes.on('publish', (packet) => {
      if (packet.topic === `${lock.prefix}/event`) published.push(packet.payload.toString());
    });
    const online = await startAgent(lock.state);
    await expect.poll(() => published.length).toBe(3);
    expect(published).toEqual(kept);
    const events = published.map((jws) => verified(jws, lock.certificatePem, lock.deviceId));
    expectChain(published, events, 1, null);
    expect(events.map((e) => [e.type, e.offline])).toEqual([
      ['unlocked', true],
      ['door_opened', true],
      ['door_closed', true],
    ]);
    await expect.poll(() => lock.state.read('events')).toBeNull();
    // Decided while connected: not marked offline.
    await expect.poll(() => online.agent.client.connected).toBe(true);
    online.agent.reportSensor({ type: 'jammed' });
    await expect.poll(() => published.length).toBe(4);
    expect(verified(published[3]!, lock.certificatePem, lock.deviceId)).toMatchObject({ seq: 4, prev: hashOf(published[2]!), type: 'jammed' });
    expect(verified(published[3]!, lock.certificatePem, lock.deviceId).offline).toBeUndefined();
  });

  it('drops the oldest undelivered events past its limit, logs it, and says how many in the events that follow', async () => {
    const lock = await device('mqtt://127.0.0.1:1');
    const warnings: string[] = [];
    const offline = await startAgent(lock.state, { maxQueuedEvents: 3, log: { info: () => undefined, warn: (m) => warnings.push(m) } });
    for (const type of ['door_opened', 'door_closed', 'door_opened', 'door_closed', 'door_opened'] as const) offline.agent.reportSensor({ type });
    await offline.stop();
    expect(warnings.some((w) => /dropped the oldest, 1 since/.test(w))).toBe(true);

    const broker = await startBroker();
    cleanup.push(() => broker.close());
    const identity = JSON.parse((await lock.state.read('identity'))!) as Record<string, string>;
    await lock.state.write('identity', JSON.stringify({ ...identity, mqttUrl: `mqtt://127.0.0.1:${broker.port}` }));
    const published: string[] = [];
    broker.aedes.on('publish', (packet) => {
      if (packet.topic === `${lock.prefix}/event`) published.push(packet.payload.toString());
    });
    const online = await startAgent(lock.state, { maxQueuedEvents: 3 });
    await expect.poll(() => published.length).toBe(3);
    const events = published.map((jws) => verified(jws, lock.certificatePem, lock.deviceId));
    // Events 1 and 2 were dropped; 3 follows on from 2 (which the platform never gets: a gap it shows).
    expect(events.map((e) => [e.seq, e.dropped])).toEqual([
      [3, undefined],
      [4, 1],
      [5, 2],
    ]);
    expectChain(published, events, 3, events[0]!.prev);
    // Once the queue has emptied, the count starts again.
    await expect.poll(() => lock.state.read('events')).toBeNull();
    online.agent.reportSensor({ type: 'tampered' });
    await expect.poll(() => published.length).toBe(4);
    expect(verified(published[3]!, lock.certificatePem, lock.deviceId)).toMatchObject({ seq: 6 });
    expect(verified(published[3]!, lock.certificatePem, lock.deviceId).dropped).toBeUndefined();
  });

  it('delivers what it decided while its broker was down, in order, once the broker is back on the same address', async () => {
    let broker = await startBroker();
    const port = broker.port;
    const lock = await device(`mqtt://127.0.0.1:${port}`);
    const published: string[] = [];
    const listen = (b: Broker) =>
      b.aedes.on('publish', (packet) => {
        if (packet.topic === `${lock.prefix}/event`) published.push(packet.payload.toString());
      });
    listen(broker);
    const { agent } = await startAgent(lock.state);
    await expect.poll(() => agent.client.connected).toBe(true);
    agent.reportSensor({ type: 'door_opened' });
    await expect.poll(() => published.length).toBe(1);

    await broker.close();
    await expect.poll(() => agent.client.connected).toBe(false);
    agent.reportSensor({ type: 'door_closed' });
    agent.reportSensor({ type: 'battery', value: 30 });
    broker = await startBroker(port);
    cleanup.push(() => broker.close());
    listen(broker);
    await expect.poll(() => published.length, { timeout: 10_000 }).toBe(3);
    const events = published.map((jws) => verified(jws, lock.certificatePem, lock.deviceId));
    expectChain(published, events, 1, null);
    expect(events.map((e) => [e.type, e.offline])).toEqual([
      ['door_opened', undefined],
      ['door_closed', true],
      ['battery', true],
    ]);
  });

  it('keeps its wrong codes and a lockout across a restart', async () => {
    const lock = await device('mqtt://127.0.0.1:1');
    const first = await startAgent(lock.state);
    for (let i = 0; i < 4; i++) await first.agent.enterCode('000000');
    await first.stop();
    const second = await startAgent(lock.state);
    expect(await second.agent.enterCode('000001')).toMatchObject({ outcome: 'REFUSED', reason: expect.stringMatching(/^This code/) });
    // The fifth wrong code, across the restart, locked the keypad: the right code is refused now.
    expect(await second.agent.enterCode('246810')).toMatchObject({ outcome: 'REFUSED', reason: expect.stringMatching(/^Too many wrong codes/) });
    await second.stop();
    const third = await startAgent(lock.state);
    expect(await third.agent.enterCode('246810')).toMatchObject({ outcome: 'REFUSED', reason: expect.stringMatching(/^Too many wrong codes/) });
    expect((await stat(lock.state.file('keypad'))).mode & 0o777).toBe(0o600);
  });

  it('keeps the lockout’s escalation across a restart: the lockout after a restart lasts twice the last', async () => {
    const lock = await device('mqtt://127.0.0.1:1');
    const first = await startAgent(lock.state);
    for (let i = 0; i < 5; i++) await first.agent.enterCode('000000');
    const saved = JSON.parse(await readFile(lock.state.file('keypad'), 'utf8')) as { until: number; level: number };
    expect(saved.level).toBe(1);
    await first.stop();
    // The lockout has ended (a power cut long enough), but the escalation is still on disk.
    await lock.state.write('keypad', JSON.stringify({ ...saved, until: Date.now() - 1 }), 0o600);
    const second = await startAgent(lock.state);
    const before = Date.now();
    for (let i = 0; i < 4; i++) await second.agent.enterCode('000000');
    const refused = await second.agent.enterCode('000000');
    expect(refused).toMatchObject({ outcome: 'REFUSED' });
    const { until } = JSON.parse(await readFile(lock.state.file('keypad'), 'utf8')) as { until: number };
    expect(until - before).toBeGreaterThanOrEqual(10 * 60_000);
    expect(until - before).toBeLessThan(15 * 60_000);
    expect(await second.agent.enterCode('246810')).toMatchObject({ outcome: 'REFUSED', reason: `Too many wrong codes: the keypad refuses every code until ${new Date(until).toISOString()}` });
  });
});
