import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { deviceTopicPrefix } from '@latchkey/contract';
import { createKeyAndCsr } from './provision.js';
import { StateDir } from './state-dir.js';
import { certifyCsr, type TestCa } from './test-fixture.js';

/** For the agent's tests: a real broker in-process (Aedes, plain TCP), a provisioned state directory, and a platform-side observer. */

export interface Broker {
  aedes: Aedes;
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startBroker(port = 0): Promise<Broker> {
  const aedes = await Aedes.createBroker();
  const server = createServer(aedes.handle);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    aedes,
    server,
    port: (server.address() as AddressInfo).port,
    // Stops listening first: a client reconnecting while the broker closes finds nothing, and none is left open.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        aedes.close(() => {
          for (const socket of sockets) socket.destroy();
        });
      }),
  };
}

/** A state directory as provisioning leaves it, pointing at `mqttUrl`. */
export async function provisionedState(mqttUrl: string, cas: { platformCa: TestCa; deviceCa: TestCa }, certificateDays = 90) {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-agent-'));
  const state = new StateDir(dir);
  const deviceId = randomUUID();
  const lockId = randomUUID();
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  const certificatePem = await certifyCsr(cas.deviceCa, csrPem, deviceId, certificateDays);
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', certificatePem);
  await state.write('deviceCa', cas.deviceCa.pem);
  await state.write('platformCa', cas.platformCa.pem);
  await state.write('identity', JSON.stringify({ deviceId, lockId, mqttUrl, topicPrefix: deviceTopicPrefix(deviceId), apiUrl: 'http://localhost/api' }));
  return { dir, state, deviceId, lockId, prefix: deviceTopicPrefix(deviceId), certificatePem };
}

/** A platform-side client that records everything under the device's prefix. */
export async function observe(port: number, prefix: string) {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: `platform-${randomUUID()}`, reconnectPeriod: 0 });
  const seen: { topic: string; text: string; retain: boolean }[] = [];
  const waiters: { match: (m: (typeof seen)[number]) => boolean; resolve: (text: string) => void }[] = [];
  client.on('message', (topic, payload, packet) => {
    const message = { topic, text: payload.toString(), retain: packet.retain };
    seen.push(message);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(message)) waiter.resolve(message.text);
      else waiters.push(waiter);
    }
  });
  await client.subscribeAsync(`${prefix}/#`, { qos: 1 });
  /** The next message on `name` (or one already seen since `from`) whose text satisfies `test`. */
  const next = (name: string, test: (text: string) => boolean = () => true, from = 0) => {
    const match = (m: (typeof seen)[number]) => m.topic === `${prefix}/${name}` && test(m.text);
    const already = seen.slice(from).find(match);
    return already ? Promise.resolve(already.text) : new Promise<string>((resolve) => waiters.push({ match, resolve }));
  };
  return { client, seen, next };
}
