import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Aedes } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopicPrefix } from '@latchkey/contract';
import { VirtualActuator } from './actuators.js';
import { DeviceAgent } from './agent.js';
import { createKeyAndCsr } from './provision.js';
import { StateDir } from './state-dir.js';
import { certifyCsr, createDeviceCa, createTestCa, issueLeaf, signOperation, unlockClaims, type TestCa } from './test-fixture.js';

let platformCa: TestCa;
let deviceCa: TestCa;
const brokers: { aedes: Aedes; server: Server }[] = [];

/** A broker on loopback; `refuse` answers every connect as not authorized, as the platform's does for an unbound device. */
async function startBroker(refuse: boolean): Promise<number> {
  const aedes = await Aedes.createBroker({
    authenticate: (_client, _username, _password, done) =>
      refuse ? done(Object.assign(new Error('not authorized'), { returnCode: 5 }) as Parameters<typeof done>[0], false) : done(null, true),
  });
  const server = createServer(aedes.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  brokers.push({ aedes, server });
  return (server.address() as AddressInfo).port;
}

/**
 * A TCP relay to `target` that can go silent: it keeps both connections open and passes nothing on, as a
 * broker behind a dead link or a hung broker looks to the device (no FIN, no answer).
 */
async function silentableRelay(target: number) {
  const sockets: Socket[] = [];
  let silent = false;
  const server = createServer((client) => {
    const upstream = createConnection(target, '127.0.0.1');
    sockets.push(client, upstream);
    client.on('data', (chunk) => silent || upstream.write(chunk));
    upstream.on('data', (chunk) => silent || client.write(chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    silence: () => (silent = true),
    close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

beforeAll(async () => {
  [platformCa, deviceCa] = await Promise.all([createTestCa(), createDeviceCa()]);
});
afterAll(async () => {
  for (const { aedes, server } of brokers) await new Promise<void>((resolve) => aedes.close(() => server.close(() => resolve())));
});

async function provisioned(brokerPort: number) {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-stop-'));
  const state = new StateDir(dir);
  const deviceId = randomUUID();
  const lockId = randomUUID();
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', await certifyCsr(deviceCa, csrPem, deviceId, 90));
  await state.write('deviceCa', deviceCa.pem);
  await state.write('platformCa', platformCa.pem);
  await state.write(
    'identity',
    JSON.stringify({ deviceId, lockId, mqttUrl: `mqtt://127.0.0.1:${brokerPort}`, topicPrefix: deviceTopicPrefix(deviceId), apiUrl: 'http://localhost/api' }),
  );
  return { dir, state, lockId };
}

async function startAgent(state: StateDir, warnings: string[], extra: Partial<Parameters<typeof DeviceAgent.start>[0]> = {}) {
  return DeviceAgent.start({
    state,
    actuator: new VirtualActuator(),
    firmware: 'test',
    log: { info: () => undefined, warn: (m) => warnings.push(m) },
    reconnectMs: 20,
    maxReconnectMs: 50,
    httpPort: 0,
    httpHost: '127.0.0.1',
    ...extra,
  });
}

/** A user the lock has no config for: refused at the local endpoint, a refusal counted for the platform. */
async function refusedLocally(agent: DeviceAgent, lockId: string) {
  const stranger = await issueLeaf(platformCa);
  const response = await fetch(`http://127.0.0.1:${agent.httpPort}/execute`, { method: 'POST', body: signOperation(stranger, unlockClaims(stranger, lockId)) });
  expect(response.status).toBe(403);
}

// Each test's own time limit is the bound: a stop that waits on a broker which never answers fails it.
describe('stopping a device ends however the broker behaves, and keeps what it could not report', () => {
  it('the broker refused the device for good, a local refusal waiting to be reported', async () => {
    const device = await provisioned(await startBroker(true));
    const agent = await startAgent(device.state, []);
    try {
      await agent.refused;
      await refusedLocally(agent, device.lockId);
    } finally {
      await agent.stop();
    }
    expect(await device.state.read('results')).toContain('"outcome":"REFUSED"');
    await rm(device.dir, { recursive: true, force: true });
  }, 15_000);

  it('the broker refused the device once and it is about to try again, a local refusal waiting', async () => {
    const device = await provisioned(await startBroker(true));
    const warnings: string[] = [];
    const agent = await startAgent(device.state, warnings, { maxNotAuthorized: 1000 });
    try {
      await refusedLocally(agent, device.lockId);
      await expect.poll(() => warnings.filter((w) => w.includes('refused this device')).length).toBeGreaterThan(1);
    } finally {
      await agent.stop();
    }
    expect(await device.state.read('results')).toContain('"outcome":"REFUSED"');
    await rm(device.dir, { recursive: true, force: true });
  }, 15_000);

  it('the connection is up but the broker has gone silent, a local refusal waiting', async () => {
    const relay = await silentableRelay(await startBroker(false));
    const device = await provisioned(relay.port);
    const agent = await startAgent(device.state, [], { keepaliveS: 3600 });
    try {
      await expect.poll(() => agent.client.connected).toBe(true);
      relay.silence();
      await refusedLocally(agent, device.lockId);
    } finally {
      await agent.stop();
      await relay.close();
    }
    // Not acknowledged by the broker: kept for the next run (the platform logs a report sent twice once).
    expect(await device.state.read('results')).toContain('"outcome":"REFUSED"');
    await rm(device.dir, { recursive: true, force: true });
  }, 15_000);
});
