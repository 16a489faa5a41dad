import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Aedes } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopicPrefix } from '@latchkey/contract';
import { VirtualActuator } from './actuators.js';
import { DeviceAgent } from './agent.js';
import { buildCli } from './cli-fixture.js';
import { createKeyAndCsr } from './provision.js';
import { StateDir } from './state-dir.js';
import { certifyCsr, createDeviceCa, createTestCa, type TestCa } from './test-fixture.js';

/**
 * A device whose certificate the platform no longer accepts (unbound from its lock, or replaced): the
 * broker refuses every connect as not authorized, as the platform's does.
 */
let platformCa: TestCa;
let deviceCa: TestCa;
let broker: { aedes: Aedes; server: Server; port: number; refusals: number };

beforeAll(async () => {
  [platformCa, deviceCa] = await Promise.all([createTestCa(), createDeviceCa()]);
  const state = { refusals: 0 };
  const aedes = await Aedes.createBroker({
    authenticate: (_client, _username, _password, done) => {
      state.refusals++;
      done(
        Object.assign(new Error('not authorized'), { returnCode: 5 }) as Parameters<typeof done>[0],
        false,
      );
    },
  });
  const server = createServer(aedes.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  broker = Object.assign(state, { aedes, server, port: (server.address() as AddressInfo).port });
});
afterAll(
  () => new Promise<void>((resolve) => broker.aedes.close(() => broker.server.close(() => resolve()))),
);

async function provisioned() {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-unbound-'));
  const state = new StateDir(dir);
  const deviceId = randomUUID();
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', await certifyCsr(deviceCa, csrPem, deviceId, 90));
  await state.write('deviceCa', deviceCa.pem);
  await state.write('platformCa', platformCa.pem);
  await state.write(
    'identity',
    JSON.stringify({
      deviceId,
      lockId: randomUUID(),
      mqttUrl: `mqtt://127.0.0.1:${broker.port}`,
      topicPrefix: deviceTopicPrefix(deviceId),
      apiUrl: 'http://localhost/api',
    }),
  );
  return { dir, state, deviceId };
}

describe('a device the platform refuses as not authorized', () => {
  it('says it was unbound or replaced at each refusal, and stops trying after five in a row', async () => {
    const device = await provisioned();
    const warnings: string[] = [];
    const before = broker.refusals;
    const agent = await DeviceAgent.start({
      state: device.state,
      actuator: new VirtualActuator(),
      firmware: 'test',
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      reconnectMs: 20,
      maxReconnectMs: 50,
    });
    try {
      await agent.refused;
      expect(broker.refusals - before).toBe(5);
      const refusals = warnings.filter((w) => w.includes('refused this device as not authorized'));
      expect(refusals.map((w) => /\((\d) of 5\)/.exec(w)?.[1])).toEqual(['1', '2', '3', '4', '5']);
      expect(refusals[0]).toContain('unbound from its lock, or replaced by another device');
      // Stopped: no reconnect is scheduled any more.
      expect(warnings.filter((w) => w.startsWith('Not connected'))).toHaveLength(4);
    } finally {
      await agent.stop();
      await rm(device.dir, { recursive: true, force: true });
    }
  });

  it('counts a refusal of its certificate’s name (bad user name or password, as RabbitMQ answers) the same way', async () => {
    const device = await provisioned();
    const warnings: string[] = [];
    await device.state.write('identity', JSON.stringify({ ...JSON.parse((await device.state.read('identity'))!), mqttUrl: 'mqtt://127.0.0.1:1' }));
    const agent = await DeviceAgent.start({
      state: device.state,
      actuator: new VirtualActuator(),
      firmware: 'test',
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      reconnectMs: 20,
      maxReconnectMs: 50,
    });
    try {
      for (let i = 0; i < 5; i++) agent.client.emit('error', Object.assign(new Error('Connection refused: Bad username or password'), { code: 4 }));
      await agent.refused;
      expect(warnings.filter((w) => w.includes('refused this device as not authorized'))).toHaveLength(5);
    } finally {
      await agent.stop();
      await rm(device.dir, { recursive: true, force: true });
    }
  });

  it('counts a certificate an external broker refuses as revoked the same way, and not a broker that is away', async () => {
    const device = await provisioned();
    const warnings: string[] = [];
    // A port with nothing listening: connection refused, which is no verdict on the device.
    await device.state.write(
      'identity',
      JSON.stringify({
        ...JSON.parse((await device.state.read('identity'))!),
        mqttUrl: 'mqtt://127.0.0.1:1',
      }),
    );
    const agent = await DeviceAgent.start({
      state: device.state,
      actuator: new VirtualActuator(),
      firmware: 'test',
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      reconnectMs: 20,
      maxReconnectMs: 50,
    });
    try {
      await expect
        .poll(() => warnings.filter((w) => w.startsWith('MQTT: ') && w.includes('ECONNREFUSED')).length)
        .toBeGreaterThan(1);
      expect(warnings.some((w) => w.includes('refused this device'))).toBe(false);
      // What Node's TLS says when Mosquitto refuses the certificate by its CRL.
      const revoked = Object.assign(
        new Error('error:0A00041C:SSL routines::sslv3 alert certificate revoked'),
        { code: 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED' },
      );
      for (let i = 0; i < 5; i++) agent.client.emit('error', revoked);
      await agent.refused;
      expect(
        warnings.filter((w) =>
          w.includes('refused this device as not authorized (its certificate is revoked)'),
        ),
      ).toHaveLength(5);
    } finally {
      await agent.stop();
      await rm(device.dir, { recursive: true, force: true });
    }
  });

  // The command's five connects wait 1, 2, 4 and 8 s between them (each shortened by up to half): up to
  // 15 s before it ends, on top of its start. The cap is for a command that never ends.
  it('`latchkey-device run` ends saying the device was unbound and how to provision it again', { timeout: 60_000 }, async () => {
    const [device, command] = await Promise.all([provisioned(), buildCli()]);
    try {
      const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [command.cli, 'run', '--dir', device.dir],
          { timeout: 50_000 },
          (_error, _stdout, err) => resolve({ code: child.exitCode, stderr: err }),
        );
      });
      expect(code).toBe(2);
      expect(stderr).toContain(`The platform no longer accepts device ${device.deviceId}`);
      expect(stderr).toContain('it was unbound from its lock, or replaced by another device');
      expect(stderr).toContain(`latchkey-device provision --api <url> --code <code> --dir ${device.dir}`);
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      command.remove();
      await rm(device.dir, { recursive: true, force: true });
    }
  });
});
