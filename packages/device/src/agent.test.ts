import { rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deviceRefusals, operationErrors, type DeviceResult, type DeviceStateMessage } from '@latchkey/contract';
import { VirtualActuator } from './actuators.js';
import { DeviceAgent, type Logger } from './agent.js';
import { observe, provisionedState, startBroker, type Broker } from './broker-fixture.js';
import { executeCommand } from './cli-commands.js';
import { createKeyAndCsr } from './provision.js';
import { ReplayCache } from './replay-cache.js';
import { ReplayStore } from './replay-store.js';
import { StateDir } from './state-dir.js';
import {
  certifyCsr,
  configUser,
  createDeviceCa,
  createTestCa,
  issueLeaf,
  signConfig,
  signOperation,
  testConfig,
  unlockClaims,
  type TestCa,
  type TestUser,
} from './test-fixture.js';

/**
 * The agent against a real broker (Aedes, in-process, plain TCP): presence and its Last Will, state,
 * config, operations and results, the local endpoint, and certificate renewal.
 */

let platformCa: TestCa;
let deviceCa: TestCa;
let alice: TestUser;
const quiet: Logger = process.env.AGENT_LOG ? { info: (m) => console.log(m), warn: (m) => console.log(m) } : { info: () => undefined, warn: () => undefined };

/** A state directory as provisioning leaves it, pointing at `mqttUrl`. */
const provisioned = (mqttUrl: string, certificateDays = 90) => provisionedState(mqttUrl, { platformCa, deviceCa }, certificateDays);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

beforeAll(async () => {
  [platformCa, deviceCa] = await Promise.all([createTestCa(), createDeviceCa()]);
  alice = await issueLeaf(platformCa);
});

async function startAgent(state: StateDir, extra: Partial<Parameters<typeof DeviceAgent.start>[0]> = {}) {
  const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'test-1.0', log: quiet, reconnectMs: 50, maxReconnectMs: 200, ...extra });
  cleanup.push(() => agent.stop());
  return agent;
}

describe('DeviceAgent on a real broker', () => {
  let broker: Broker;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker.close());

  it('says online (retained), reports its state, and the broker says offline for it when the connection dies', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    await startAgent(device.state);
    expect(await platform.next('presence')).toBe('online');
    const state = JSON.parse(await platform.next('state')) as DeviceStateMessage;
    expect(state).toMatchObject({ locked: true, firmware: 'test-1.0' });
    expect(Date.parse(state.at)).toBeGreaterThan(Date.now() - 10_000);
    const mark = platform.seen.length;
    // Cut the device off without a DISCONNECT: its Last Will speaks, then it comes back by itself.
    const [client] = [...Object.values((broker.aedes as unknown as { clients: Record<string, { close(): void }> }).clients)].filter((c) => (c as unknown as { id: string }).id === device.deviceId);
    client!.close();
    expect(await platform.next('presence', (t) => t === 'offline', mark)).toBe('offline');
    expect(await platform.next('presence', (t) => t === 'online', mark)).toBe('online');
  });

  it('takes a signed config, stores it, answers operations on …/result and reports the state change', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    const agent = await startAgent(device.state);
    await platform.next('presence');
    const configJws = signConfig(platformCa, testConfig(device.lockId, [configUser(alice)], { version: 3 }));
    const taken = new Promise((resolve) => agent.controller.once('config', resolve));
    await platform.client.publishAsync(`${device.prefix}/config`, configJws, { qos: 1, retain: true });
    await taken;
    await expect.poll(() => device.state.read('config')).toBe(configJws);
    // The state says which config the lock holds.
    expect(JSON.parse(await platform.next('state', (t) => (JSON.parse(t) as DeviceStateMessage).configVersion === 3))).toMatchObject({ locked: true, configVersion: 3 });

    // A malformed message is ignored: the first result is the valid operation's.
    await platform.client.publishAsync(`${device.prefix}/op`, '{"requestId": 7}', { qos: 1 });
    const unlock = signOperation(alice, unlockClaims(alice, device.lockId, Date.now(), { operation: { type: 'MUTATE_LOCK', locked: false, duration: 30 } }));
    await platform.client.publishAsync(`${device.prefix}/op`, JSON.stringify({ requestId: 'r-1', jws: unlock }), { qos: 1 });
    expect(JSON.parse(await platform.next('result'))).toEqual({ requestId: 'r-1', outcome: 'DONE', state: { locked: false } } satisfies DeviceResult);
    expect(JSON.parse(await platform.next('state', (t) => JSON.parse(t).locked === false))).toMatchObject({ locked: false });

    await platform.client.publishAsync(`${device.prefix}/op`, JSON.stringify({ requestId: 'r-2', jws: unlock }), { qos: 1 });
    expect(JSON.parse(await platform.next('result', (t) => t.includes('r-2')))).toEqual({ requestId: 'r-2', outcome: 'REFUSED', reason: operationErrors.replayed, reasonKey: 'replayed', state: { locked: false } });

    // An older config is ignored; the one stored stays.
    await platform.client.publishAsync(`${device.prefix}/config`, signConfig(platformCa, testConfig(device.lockId, [], { version: 2 })), { qos: 1, retain: true });
    const op = signOperation(alice, unlockClaims(alice, device.lockId));
    await platform.client.publishAsync(`${device.prefix}/op`, JSON.stringify({ requestId: 'r-3', jws: op }), { qos: 1 });
    expect(JSON.parse(await platform.next('result', (t) => t.includes('r-3')))).toMatchObject({ outcome: 'DONE' });
    expect(agent.controller.config?.version).toBe(3);
  });

  it('says so when a config cannot be saved, and still obeys it', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    const warnings: string[] = [];
    const agent = await startAgent(device.state, { log: { info: () => undefined, warn: (m) => warnings.push(m) } });
    await platform.next('presence');
    const write = device.state.write.bind(device.state);
    device.state.write = async (name, ...rest) => {
      if (name === 'config') throw new Error('disk full');
      return write(name, ...rest);
    };
    await platform.client.publishAsync(`${device.prefix}/config`, signConfig(platformCa, testConfig(device.lockId, [configUser(alice)], { version: 4 })), { qos: 1, retain: true });
    await expect.poll(() => warnings).toContain('Could not save the config: disk full');
    expect(agent.controller.config?.version).toBe(4);
    expect(JSON.parse(await platform.next('state', (t) => (JSON.parse(t) as DeviceStateMessage).configVersion === 4))).toMatchObject({ configVersion: 4 });
  });

  it('announces its local endpoint in its state', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1', directAccessEndpoints: ['http://192.168.1.20:8080/execute'] });
    expect(JSON.parse(await platform.next('state'))).toMatchObject({ directAccessEndpoints: ['http://192.168.1.20:8080/execute'] });
  });

  it('renews its certificate: a CSR on …/renew, the new certificate stored with its new key, and back online', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`, 10);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    const oldKey = await device.state.read('key');
    await startAgent(device.state);
    const csrPem = await platform.next('renew');
    expect(csrPem).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----/);
    const renewed = await certifyCsr(deviceCa, csrPem, device.deviceId, 90);
    const mark = platform.seen.length;
    await platform.client.publishAsync(`${device.prefix}/certificate`, JSON.stringify({ certificate: renewed }), { qos: 1 });
    expect(await platform.next('presence', (t) => t === 'online', mark)).toBe('online');
    expect(await device.state.read('certificate')).toBe(renewed);
    expect(await device.state.read('key')).not.toBe(oldKey);
    expect(await device.state.read('pendingKey')).toBeNull();
  });

  it('ignores a certificate from another CA', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    const warnings: string[] = [];
    await startAgent(device.state, { log: { info: () => undefined, warn: (m) => warnings.push(m) } });
    await platform.next('presence');
    const before = await device.state.read('certificate');
    const { csrPem } = await createKeyAndCsr(device.deviceId);
    await platform.client.publishAsync(`${device.prefix}/certificate`, JSON.stringify({ certificate: await certifyCsr(platformCa, csrPem, device.deviceId) }), { qos: 1 });
    await expect.poll(() => warnings.some((w) => w.includes('not issued by the device CA'))).toBe(true);
    expect(await device.state.read('certificate')).toBe(before);
  });
});

describe('DeviceAgent stopping', () => {
  it('stops even when the broker never acknowledges its goodbye', async () => {
    const broker = await startBroker();
    cleanup.unshift(() => broker.close());
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    cleanup.push(() => rm(device.dir, { recursive: true }));
    // The broker takes the device's presence "offline" and never answers it.
    broker.aedes.authorizePublish = (_client, packet, callback) => {
      if (packet.topic.endsWith('/presence') && packet.payload.toString() === 'offline') return;
      callback(null);
    };
    const agent = await DeviceAgent.start({ state: device.state, actuator: new VirtualActuator(), firmware: 'test-1.0', log: quiet, reconnectMs: 50 });
    await expect.poll(() => agent.client.connected).toBe(true);
    await agent.stop();
    expect(agent.client.connected).toBe(false);
    expect(await device.state.holder()).toBeNull();
  });
});

describe('DeviceAgent without the platform', () => {
  it('decides from its stored config through the local endpoint, and reports the outcomes once the broker is back', async () => {
    // A port with nothing listening yet: the broker starts on it later.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    const device = await provisioned(`mqtt://127.0.0.1:${port}`);
    cleanup.push(() => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const agent = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1', refusalReportMs: 20 });
    const url = `http://127.0.0.1:${agent.httpPort}/execute`;

    const jws = signOperation(alice, unlockClaims(alice, device.lockId));
    expect((await fetch(url, { method: 'POST', body: jws, headers: { 'content-type': 'text/plain' } })).status).toBe(204);
    const again = await fetch(url, { method: 'POST', body: JSON.stringify(jws), headers: { 'content-type': 'application/json' } });
    expect(again.status).toBe(403);
    expect(await again.json()).toEqual({ code: 403, message: operationErrors.replayed });
    const bad = await fetch(url, { method: 'POST', body: '{"jws": 1}', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect((await fetch(url, { method: 'POST', body: 'not-a-jws' })).status).toBe(400);

    const broker = await startBroker(port);
    // Closed after the agent has stopped (cleanup runs last to first).
    cleanup.unshift(() => broker.close());
    const results: DeviceResult[] = [];
    broker.aedes.on('publish', (packet) => {
      if (packet.topic === `${device.prefix}/result`) results.push(JSON.parse(packet.payload.toString()) as DeviceResult);
    });
    // The two decisions are reported; the requests that were not operations (400) are not.
    await expect.poll(() => results.length, { timeout: 5000 }).toBe(2);
    expect(results[0]).toMatchObject({ outcome: 'DONE', state: { locked: false }, method: 'local', jws });
    expect(results[0]!.requestId).toMatch(/^local-[0-9a-f-]{36}$/);
    expect(results[1]).toMatchObject({ outcome: 'REFUSED', reason: operationErrors.replayed, reasonKey: 'replayed', method: 'local', count: 1 });
  });

  it('keeps outcomes the platform has not heard across a restart, and reports them when connected', async () => {
    const device = await provisioned('mqtt://127.0.0.1:1');
    cleanup.push(() => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const offline = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1' });
    expect((await fetch(`http://127.0.0.1:${offline.httpPort}/execute`, { method: 'POST', body: signOperation(alice, unlockClaims(alice, device.lockId)) })).status).toBe(204);
    await offline.stop();

    const broker = await startBroker();
    cleanup.unshift(() => broker.close());
    const identity = JSON.parse((await device.state.read('identity'))!) as Record<string, string>;
    await device.state.write('identity', JSON.stringify({ ...identity, mqttUrl: `mqtt://127.0.0.1:${broker.port}` }));
    const results: DeviceResult[] = [];
    broker.aedes.on('publish', (packet) => {
      if (packet.topic === `${device.prefix}/result`) results.push(JSON.parse(packet.payload.toString()) as DeviceResult);
    });
    await startAgent(device.state);
    await expect.poll(() => results.length).toBe(1);
    expect(results[0]).toMatchObject({ requestId: expect.stringMatching(/^local-/), outcome: 'DONE' });
    await expect.poll(() => device.state.read('results')).toBeNull();
  });

  it('keeps the operations it obeyed across a restart, so one cannot be used twice', async () => {
    const device = await provisioned('mqtt://127.0.0.1:1');
    cleanup.push(() => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const jws = signOperation(alice, unlockClaims(alice, device.lockId));
    const first = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1' });
    expect((await fetch(`http://127.0.0.1:${first.httpPort}/execute`, { method: 'POST', body: jws })).status).toBe(204);
    await first.stop();
    const second = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1' });
    const replay = await fetch(`http://127.0.0.1:${second.httpPort}/execute`, { method: 'POST', body: jws });
    expect(await replay.json()).toEqual({ code: 403, message: operationErrors.replayed });
  });

  it('has an operation’s use on disk before the lock moves: a kill the moment the door opens cannot let it through again', async () => {
    const device = await provisioned('mqtt://127.0.0.1:1');
    cleanup.push(() => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const journalAtUnlock: (string | null)[] = [];
    const actuator = new VirtualActuator();
    const unlock = actuator.unlock.bind(actuator);
    actuator.unlock = async () => {
      journalAtUnlock.push(await device.state.read('replayJournal'));
      return unlock();
    };
    const agent = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1', actuator });
    const jws = signOperation(alice, unlockClaims(alice, device.lockId));
    expect((await fetch(`http://127.0.0.1:${agent.httpPort}/execute`, { method: 'POST', body: jws })).status).toBe(204);
    expect(journalAtUnlock).toHaveLength(1);
    expect(journalAtUnlock[0]?.split('\n').filter(Boolean)).toHaveLength(1);
    // What is on disk then is what a restart reads: the same operation is refused.
    const restored = new ReplayCache();
    await new ReplayStore(new StateDir(device.dir), restored).load(Date.now());
    expect(restored.size).toBe(1);
  });

  it('is the one process deciding for its directory: a second agent is refused, execute is refused beside an agent without a local endpoint and handed to one with it', async () => {
    const device = await provisioned('mqtt://127.0.0.1:1');
    cleanup.push(() => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const jws = signOperation(alice, unlockClaims(alice, device.lockId));
    const first = await startAgent(device.state);
    await expect(startAgent(device.state)).rejects.toThrow(/Another latchkey-device \(run, pid \d+\)/);
    await expect(executeCommand(device.state, jws, {})).rejects.toThrow(/serves no local endpoint/);
    expect(first.controller.state.locked).toBe(true);
    await first.stop();

    const serving = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1' });
    expect((await fetch(`http://127.0.0.1:${serving.httpPort}/execute`, { method: 'POST', body: jws })).status).toBe(204);
    // Handed to the running agent, whose replay cache has it: refused, exit code 1.
    expect(await executeCommand(device.state, jws, {})).toBe(1);
    await serving.stop();
    // Stopped, it leaves the directory to the next process, which still refuses the operation it obeyed.
    expect(await device.state.holder()).toBeNull();
    expect(await executeCommand(device.state, jws, {})).toBe(1);
  });
});

describe('DeviceAgent’s local endpoint under refusals', () => {
  let broker: Broker;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker.close());

  it('answers 429 to an address past its refusals, and reports refusals together — one result per reason with its count — and each done operation with its JWS', async () => {
    const device = await provisioned(`mqtt://127.0.0.1:${broker.port}`);
    const platform = await observe(broker.port, device.prefix);
    cleanup.push(() => platform.client.endAsync(), () => rm(device.dir, { recursive: true }));
    await device.state.write('config', signConfig(platformCa, testConfig(device.lockId, [configUser(alice)])));
    const agent = await startAgent(device.state, { httpPort: 0, httpHost: '127.0.0.1', refusalReportMs: 200, localRefusalLimit: { max: 3, windowMs: 60_000 } });
    await platform.next('presence');
    const url = `http://127.0.0.1:${agent.httpPort}/execute`;
    const post = (body: string) => fetch(url, { method: 'POST', body });

    const jws = signOperation(alice, unlockClaims(alice, device.lockId));
    expect((await post(jws)).status).toBe(204);
    const done = JSON.parse(await platform.next('result')) as DeviceResult;
    expect(done).toMatchObject({ outcome: 'DONE', method: 'local', jws, state: { locked: false } });
    expect(Date.parse(done.at!)).toBeGreaterThan(Date.now() - 10_000);

    for (let i = 0; i < 3; i++) expect((await post(jws)).status).toBe(403);
    // Past the limit, even a good operation is not looked at.
    const fresh = signOperation(alice, unlockClaims(alice, device.lockId));
    const limited = await post(fresh);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.json()).toEqual({ code: 429, message: deviceRefusals.tooManyRefusals });

    const refused = JSON.parse(await platform.next('result', (t) => t.includes('REFUSED'))) as DeviceResult;
    expect(refused).toMatchObject({ outcome: 'REFUSED', method: 'local', reason: operationErrors.replayed, count: 3 });
    expect(refused.jws).toBeUndefined();
    expect(platform.seen.filter((m) => m.topic === `${device.prefix}/result`)).toHaveLength(2);
  });
});
