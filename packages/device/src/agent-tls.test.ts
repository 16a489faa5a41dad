import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { Aedes } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopicPrefix } from '@latchkey/contract';
import { VirtualActuator } from './actuators.js';
import { DeviceAgent } from './agent.js';
import { createKeyAndCsr } from './provision.js';
import { StateDir } from './state-dir.js';
import { brokerCertificate, certifyCsr, createDeviceCa, createTestCa, type TestCa } from './test-fixture.js';

/**
 * Mutual TLS as the platform's broker does it: the broker presents a certificate from the device CA and
 * requires a client certificate from the same CA; the device checks the broker with the CA it was given.
 */

let deviceCa: TestCa;
let platformCa: TestCa;
let aedes: Aedes;
let server: Server;
let port: number;
const peers: string[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  [deviceCa, platformCa] = await Promise.all([createDeviceCa(), createTestCa()]);
  const { keyPem, certificatePem } = await brokerCertificate(deviceCa);
  aedes = await Aedes.createBroker();
  server = createServer({ key: keyPem, cert: certificatePem, ca: deviceCa.pem, requestCert: true, rejectUnauthorized: true }, (socket: TLSSocket) => {
    peers.push(String(socket.getPeerCertificate().subject?.CN));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => aedes.close(() => server.close(() => resolve())));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function device(issuer: TestCa, brokerCa: TestCa = deviceCa) {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-tls-'));
  dirs.push(dir);
  const state = new StateDir(dir);
  const deviceId = randomUUID();
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', await certifyCsr(issuer, csrPem, deviceId));
  await state.write('deviceCa', brokerCa.pem);
  await state.write('platformCa', platformCa.pem);
  await state.write('identity', JSON.stringify({ deviceId, lockId: randomUUID(), mqttUrl: `mqtts://127.0.0.1:${port}`, topicPrefix: deviceTopicPrefix(deviceId), apiUrl: 'http://localhost/api' }));
  return { state, deviceId };
}

const onlineFrom = (deviceId: string) =>
  new Promise<string>((resolve) => {
    const listener = (packet: { topic: string; payload: Buffer | string }) => {
      if (packet.topic !== `${deviceTopicPrefix(deviceId)}/presence`) return;
      aedes.removeListener('publish', listener);
      resolve(packet.payload.toString());
    };
    aedes.on('publish', listener);
  });

describe('DeviceAgent over mqtts://', () => {
  it('connects with its certificate, named by it, and checks the broker with the device CA', async () => {
    const { state, deviceId } = await device(deviceCa);
    const online = onlineFrom(deviceId);
    const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 't', log: { info: () => undefined, warn: () => undefined } });
    expect(await online).toBe('online');
    expect(peers).toContain(deviceId);
    await agent.stop();
  });

  it('does not connect to a broker it cannot check', async () => {
    const { state } = await device(deviceCa, platformCa);
    const warnings: string[] = [];
    const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 't', log: { info: () => undefined, warn: (m) => warnings.push(m) }, reconnectMs: 50 });
    await expect.poll(() => warnings.some((w) => /self.signed|unable to verify|certificate/i.test(w))).toBe(true);
    expect(agent.client.connected).toBe(false);
    await agent.stop();
  });

  it('is refused by the broker with a certificate of another CA, and keeps trying', async () => {
    const { state, deviceId } = await device(platformCa);
    const warnings: string[] = [];
    const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 't', log: { info: () => undefined, warn: (m) => warnings.push(m) }, reconnectMs: 50 });
    await expect.poll(() => warnings.filter((w) => w.includes('trying again')).length).toBeGreaterThan(1);
    expect(agent.client.connected).toBe(false);
    expect(peers).not.toContain(deviceId);
    await agent.stop();
  });
});
