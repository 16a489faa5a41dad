import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import mqtt from 'mqtt';
import { and, eq } from 'drizzle-orm';
import { deviceErrors, deviceLogReasons, deviceRefusals, operationErrors, type DeviceCreated, type DeviceResult, type DeviceStatus, type Lock } from '@latchkey/contract';
import { buildApp } from '../src/app.js';
import { lockActivity, lockDevices, webhookDeliveries, webhooks } from '../src/db/schema.js';
import { deviceCrl } from '../src/modules/devices/device-binding.service.js';
import { createTestApp, eventually, testDbKind, type TestApp } from './helpers.js';
import { buildDeviceCli, DEVICE_PACKAGE } from './fixtures/device-cli.js';
import { MOSQUITTO, startMosquitto, type Mosquitto } from './fixtures/mosquitto.js';
import { appUserToken, certify, createLock, createSandbox, share, signOperation, type KeyHolder, type Sandbox } from './fixtures/operations.js';
import { bearer } from './fixtures/platform-users.js';

/**
 * A real `latchkey-device` process (the command as the package builds it) against the service over a real
 * HTTP port and mutual TLS, on the embedded broker and on Mosquitto 2: provisioning, presence, an unlock,
 * a refusal only the lock could make, a stopped, a frozen and a killed device, and an unbind.
 */

let cli: string;
let removeCli = () => {};
beforeAll(async () => {
  ({ cli, remove: removeCli } = await buildDeviceCli());
});
afterAll(() => removeCli());
/**
 * What the service waits for a device's answer (DEVICE_TIMEOUT_SECONDS): short, for the test of a device that
 * never answers, and still longer than a device takes to start its actuator's command on a busy host.
 */
const TIMEOUT_S = 2;
/** The device's MQTT keepalive: a device that went away is offline within it. */
const KEEPALIVE_MS = 30_000;
/** The device's refusal when its actuator fails. */
const ACTUATOR_FAILED = deviceRefusals.actuatorFailed;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

/** A `latchkey-device` child process; `output` is what it has printed so far (stdout and stderr). */
interface DeviceProcess {
  child: ChildProcess;
  readonly output: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Started in `children`, and removed from it when it exits: what a run's clean-up must still end. */
function latchkeyDevice(children: Set<ChildProcess>, ...args: string[]): DeviceProcess {
  const child = spawn(process.execPath, [cli, ...args], { cwd: DEVICE_PACKAGE, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    get output() {
      return output;
    },
    exited,
  };
}

/** Whether one of the process's children runs `program` (read from /proc: the actuator's command in flight). */
function runsChild(pid: number, program: string): boolean {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces, so read after its closing parenthesis.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && comm === program) return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

/**
 * A pass-through to the API that keeps every request body it forwards: what a device sent at provisioning
 * is then known, not assumed.
 */
async function recordingProxy(target: string): Promise<{ url: string; bodies: { path: string; body: string }[]; close: () => Promise<void> }> {
  const bodies: { path: string; body: string }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      bodies.push({ path: request.url ?? '', body });
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
      fetch(`${target}${request.url}`, { method: request.method, headers, body: body || undefined })
        .then(async (answer) => {
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          response.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const BROKERS = [
  { broker: 'the embedded broker', external: false },
  { broker: 'Mosquitto 2 (MQTT_URL)', external: true },
] as const;

/**
 * The two brokers' runs are independent (a service, a lock and a device each). On PostgreSQL they go side
 * by side, as most of their time is spent waiting on the device, the broker and the database server; on
 * PGlite the database works on this file's own thread, which the two would only take turns with.
 */
const brokersSideBySide = testDbKind === 'postgres';

(brokersSideBySide ? describe.concurrent : describe).each(BROKERS)('a latchkey-device process through $broker', ({ external }) => {
  // Each test goes on from where the one before left the device.
  describe.skipIf(external && !MOSQUITTO)('over mutual TLS', { sequential: true }, () => {
    const children = new Set<ChildProcess>();
    let t: TestApp;
    /** The instance serving HTTP: the test app itself, or one built as a client of Mosquitto. */
    let app: FastifyInstance;
    let client: TestApp;
    let mosquitto: Mosquitto | undefined;
    let origin: string;
    let sandbox: Sandbox;
    let lockId: string;
    let alice: KeyHolder;
    let dir: string;
    let deviceId: string;
    let device: DeviceProcess | undefined;

    const devicePath = () => `${origin}/api/platform/application/${sandbox.applicationId}/lock/${lockId}/device`;
    const owner = () => bearer(sandbox.owner.token);
    const deviceStatus = async () => {
      const res = await fetch(devicePath(), { headers: owner() });
      return { status: res.status, body: (await res.json()) as DeviceStatus };
    };
    const lockView = async () => (await (await fetch(`${origin}/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, { headers: owner() })).json()) as Lock;
    /** Alice's signed unlock through the service's HTTP port; the answer's status, body and how long it took. */
    const unlock = async () => {
      const started = Date.now();
      const res = await fetch(`${origin}/api/device/${lockId}/execute`, {
        method: 'POST',
        headers: { ...bearer(alice.token), 'content-type': 'application/jwt' },
        body: signOperation(alice, lockId, UNLOCK),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as { code: number; message: string }) : null, ms: Date.now() - started };
    };
    const connected = async () => (await deviceStatus()).body.connected === true;
    /**
     * Runs the device and waits until the platform shows it online and it holds the lock's signed config. The
     * cap is for a device that never gets there (its start, handshake and first config take seconds on a busy
     * host); one that did not is stopped, so the next test does not meet it holding the state directory.
     */
    const runDevice = async (...args: string[]) => {
      // A test that failed before stopping its device leaves it running: it goes first, or the new one would
      // refuse the state directory it holds and every later test would fail for that one.
      if (device) await stopDevice('SIGKILL');
      fs.rmSync(path.join(dir, 'config.jws'), { force: true });
      const started = latchkeyDevice(children, 'run', '--dir', dir, ...args);
      device = started;
      const online = await eventually(async () => (await connected()) && fs.existsSync(path.join(dir, 'config.jws')), 30_000);
      if (!online) await stopDevice('SIGKILL');
      expect(online, started.output).toBe(true);
      return started;
    };
    const stopDevice = async (signal: NodeJS.Signals) => {
      const running = device!;
      device = undefined;
      running.child.kill(signal);
      return running.exited;
    };

    beforeAll(async () => {
      t = await createTestApp({ HOST: '127.0.0.1', MQTT_PORT: '0', MQTT_PUBLIC_URL: 'mqtts://127.0.0.1:0', DEVICE_TIMEOUT_SECONDS: String(TIMEOUT_S) });
      app = t.app;
      if (external) {
        // The device CA lives in the database the test app created: the broker's certificates come from it.
        mosquitto = await startMosquitto(t.app.deviceCa, await deviceCrl(t.app.db, t.app.deviceCa));
        app = await buildApp({ ...t.app.config, mqtt: { ...t.app.config.mqtt, url: mosquitto.url, publicUrl: mosquitto.deviceUrl } }, { database: t.database, logger: false });
      } else {
        await app.mqtt.listen();
      }
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      origin = address.replace(/\/$/, '');
      client = { ...t, app };
      sandbox = await createSandbox(client);
      lockId = await createLock(client, sandbox.applicationId, { unlockTime: 30 });
      alice = await certify(client, await appUserToken(sandbox, 'alice', 'alice@example.com'));
      await share(client, lockId, alice.userId);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-device-it-'));
    });

    afterAll(async () => {
      for (const child of children) child.kill('SIGCONT');
      for (const child of children) child.kill('SIGKILL');
      if (app && app !== t?.app) await app.close();
      await mosquitto?.close();
      await t?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('provision: the device makes its key and sends only the code and a CSR for it; it stores key (0600), certificate and CAs', async () => {
      const res = await fetch(devicePath(), { method: 'POST', headers: owner() });
      expect(res.status).toBe(201);
      const created = (await res.json()) as DeviceCreated;
      deviceId = created.deviceId;

      const proxy = await recordingProxy(origin);
      const provisioned = latchkeyDevice(children, 'provision', '--api', `${proxy.url}/api`, '--code', created.provisioningCode, '--dir', dir);
      const { code } = await provisioned.exited;
      await proxy.close();
      expect(code, provisioned.output).toBe(0);

      expect(proxy.bodies.map((b) => b.path)).toEqual(['/api/device-provisioning']);
      const sent = JSON.parse(proxy.bodies[0]!.body) as Record<string, string>;
      expect(Object.keys(sent).sort()).toEqual(['code', 'csr']);
      expect(sent.code).toBe(created.provisioningCode);
      expect(proxy.bodies[0]!.body).not.toMatch(/PRIVATE KEY/);

      const keyFile = path.join(dir, 'key.pem');
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      const publicKey = createPublicKey(fs.readFileSync(keyFile, 'utf8')).export({ type: 'spki', format: 'der' });
      const csrKey = Buffer.from(new x509.Pkcs10CertificateRequest(sent.csr!).publicKey.rawData);
      expect(csrKey.equals(publicKey)).toBe(true);
      const certificate = new X509Certificate(fs.readFileSync(path.join(dir, 'certificate.pem')));
      expect(certificate.publicKey.export({ type: 'spki', format: 'der' }).equals(publicKey)).toBe(true);
      expect(certificate.subject).toBe(`CN=${deviceId}\nserialNumber=${certificate.serialNumber.toLowerCase()}`);
      expect(certificate.verify(new X509Certificate(fs.readFileSync(path.join(dir, 'device-ca.pem'))).publicKey)).toBe(true);
      const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, deviceId));
      expect(row!.certificateSerial).toBe(certificate.serialNumber.toLowerCase());
      const identity = JSON.parse(fs.readFileSync(path.join(dir, 'device.json'), 'utf8')) as { deviceId: string; lockId: string; mqttUrl: string };
      expect(identity).toMatchObject({ deviceId, lockId, mqttUrl: external ? mosquitto!.deviceUrl : `mqtts://127.0.0.1:${app.mqtt.port}` });
      expect((await deviceStatus()).body).toMatchObject({ deviceId, provisioned: true, connected: false });
    });

    it('run: the owner sees the device connected within seconds, with its firmware', async () => {
      await runDevice('--actuator', 'virtual');
      expect((await deviceStatus()).body).toMatchObject({ deviceId, connected: true, firmware: expect.stringMatching(/^latchkey-device /) });
      expect((await lockView()).device).toMatchObject({ deviceId, connected: true });
    });

    it('a shared user’s signed unlock → 204, done by the device; the lock’s reported state follows it', async () => {
      const answer = await unlock();
      expect(answer.status, JSON.stringify(answer.body)).toBe(204);
      expect(await eventually(async () => (await deviceStatus()).body.locked === false)).toBe(true);
      expect((await lockView()).state).toMatchObject({ locked: false, connected: true });
      expect(device!.output).toMatch(/: DONE\n/);
    });

    it('unlocks at the device’s local endpoint reach the audit trail once each, as the user’s, online or after a reconnect; refusals there are one entry counting them', async () => {
      await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: ['lock.unlocked'], secret: 'whsec_dGVzdA==' });
      const localEntries = async () =>
        (await t.database.db.select().from(lockActivity).where(and(eq(lockActivity.lockId, lockId), eq(lockActivity.reason, deviceLogReasons.doneLocal)))).sort((a, b) => a.seq - b.seq);
      const unlockWebhooks = async () => (await t.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.applicationId, sandbox.applicationId))).length;
      expect((await stopDevice('SIGTERM')).code).toBe(0);
      await runDevice('--actuator', 'virtual', '--http-port', '0', '--http-host', '127.0.0.1');
      const { httpPort } = JSON.parse(fs.readFileSync(path.join(dir, 'device.lock'), 'utf8')) as { httpPort: number };

      // Online: a 204 at the door is the user's entry and a lock.unlocked webhook.
      const jws = signOperation(alice, lockId, UNLOCK);
      const local = await fetch(`http://127.0.0.1:${httpPort}/execute`, { method: 'POST', body: jws });
      expect(local.status).toBe(204);
      expect(await eventually(async () => (await localEntries()).length === 1, 10_000), device!.output).toBe(true);
      expect((await localEntries())[0]).toMatchObject({ type: 'UNLOCK', rejected: false, actorUserId: alice.userId, subject: '30 s' });
      expect(await eventually(async () => (await unlockWebhooks()) === 1)).toBe(true);

      // The same report again (sent twice, or heard by every instance) is logged once.
      const relay = app.deviceRuntime.relay;
      const again: DeviceResult = { requestId: 'local-again', outcome: 'DONE', method: 'local', at: new Date().toISOString(), jws, state: { locked: false } };
      relay.onResult(deviceId, again);
      relay.onResult(deviceId, again);
      await relay.settled();
      expect(await localEntries()).toHaveLength(1);
      // A report whose operation is not the platform's users' is not logged.
      relay.onResult(deviceId, { ...again, requestId: 'local-forged', jws: `${jws.slice(0, -4)}AAAA` });
      await relay.settled();
      expect(await localEntries()).toHaveLength(1);

      // Refusals at the door: one rejected entry counting them, however often the report arrives.
      const refused: DeviceResult = { requestId: 'local-refusals', outcome: 'REFUSED', method: 'local', reason: operationErrors.replayed, count: 3, at: new Date().toISOString() };
      relay.onResult(deviceId, refused);
      relay.onResult(deviceId, refused);
      await relay.settled();
      const refusals = await t.database.db.select().from(lockActivity).where(and(eq(lockActivity.lockId, lockId), eq(lockActivity.reason, deviceLogReasons.refusedLocal(operationErrors.replayed))));
      expect(refusals).toMatchObject([{ rejected: true, repeats: 3 }]);

      // Offline: decided by `execute`, kept, and logged once the device is connected again.
      expect((await stopDevice('SIGTERM')).code).toBe(0);
      const offline = signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: true });
      const decided = latchkeyDevice(children, 'execute', offline, '--dir', dir);
      expect((await decided.exited).code, decided.output).toBe(0);
      expect(fs.existsSync(path.join(dir, 'pending-results.json'))).toBe(true);
      await runDevice('--actuator', 'virtual');
      const lockEntry = async () => (await t.database.db.select().from(lockActivity).where(and(eq(lockActivity.lockId, lockId), eq(lockActivity.type, 'LOCK'), eq(lockActivity.reason, deviceLogReasons.doneLocal))));
      expect(await eventually(async () => (await lockEntry()).length === 1, 10_000), device!.output).toBe(true);
      expect((await lockEntry())[0]).toMatchObject({ actorUserId: alice.userId, rejected: false });
      expect(await eventually(() => !fs.existsSync(path.join(dir, 'pending-results.json')))).toBe(true);
    });

    it('SIGTERM: the device locks, says offline and exits; the next unlock → 503 "The lock is offline", within its keepalive', async () => {
      const stopped = Date.now();
      expect(await stopDevice('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(await eventually(async () => !(await connected()), KEEPALIVE_MS)).toBe(true);
      const answer = await unlock();
      expect(Date.now() - stopped).toBeLessThan(KEEPALIVE_MS);
      expect(answer).toMatchObject({ status: 503, body: { code: 503, message: deviceErrors.offline } });
    });

    it('an unlock the platform accepts but the device cannot carry out (its relay command fails) → 403 with the device’s reason', async () => {
      await runDevice('--actuator', 'command', '--unlock-command', '/bin/false', '--lock-command', '/bin/true');
      const answer = await unlock();
      expect(answer).toMatchObject({ status: 403, body: { code: 403, message: ACTUATOR_FAILED } });
      expect(device!.output).toContain(`REFUSED (${ACTUATOR_FAILED})`);
      expect((await stopDevice('SIGTERM')).code).toBe(0);
    });

    it('a device that never answers (frozen with SIGSTOP, its connection open) → 504 after DEVICE_TIMEOUT_SECONDS; thawed, it carries on', async () => {
      await runDevice('--actuator', 'virtual');
      device!.child.kill('SIGSTOP');
      try {
        const answer = await unlock();
        expect(answer).toMatchObject({ status: 504, body: { code: 504, message: deviceErrors.noAnswer } });
        expect(answer.ms).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 50);
        expect(answer.ms).toBeLessThan(TIMEOUT_S * 1000 + 3000);
      } finally {
        device!.child.kill('SIGCONT');
      }
      // Thawed, it decides the operation it was holding; the late answer changes nothing, and it is still online.
      expect(await eventually(() => /: DONE\n/.test(device!.output), 5000)).toBe(true);
      expect(await connected()).toBe(true);
      expect((await stopDevice('SIGTERM')).code).toBe(0);
    });

    it('kill -9 while the relay command runs → 504 or 503, nothing else and no hang; restarted, the device is back online and obeys', async () => {
      await runDevice('--actuator', 'command', '--unlock-command', 'sleep 2', '--lock-command', '/bin/true');
      const pid = device!.child.pid!;
      const answered = unlock();
      expect(await eventually(() => runsChild(pid, 'sleep'), 5000), device!.output).toBe(true);
      expect(await stopDevice('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      const answer = await answered;
      expect([503, 504]).toContain(answer.status);
      expect(answer.body).toEqual({ code: answer.status, message: answer.status === 503 ? deviceErrors.offline : deviceErrors.noAnswer });
      expect(answer.ms).toBeLessThan(TIMEOUT_S * 1000 + 3000);
      // Its Last Will says offline.
      expect(await eventually(async () => !(await connected()), KEEPALIVE_MS)).toBe(true);

      await runDevice('--actuator', 'virtual');
      expect((await unlock()).status).toBe(204);
    });

    it('unbind: the device is cut off and cannot come back; the lock is a sandbox lock again', async () => {
      const running = device!;
      const before = running.output.length;
      const res = await fetch(devicePath(), { method: 'DELETE', headers: owner() });
      expect(res.status).toBe(204);
      const since = () => running.output.slice(before);
      if (external) {
        // An external broker refuses the certificate by the CRL the service publishes, once the connection is made again.
        const crl = await fetch(`${origin}/api/device-ca/crl.pem`);
        expect(crl.status).toBe(200);
        await mosquitto!.replaceCrl(await crl.text());
      } else {
        // The embedded broker ends the connection at once.
        expect(await eventually(() => /Not connected to/.test(since()), 1000), since()).toBe(true);
      }
      // Every attempt to come back is refused: by the service's check of the certificate (a CONNACK saying
      // not authorized), or by the CRL in the TLS handshake.
      const refusal = external ? /certificate (is )?revoked/ : /not authorized/i;
      expect(await eventually(() => refusal.test(since()) && (since().match(/Not connected to/g) ?? []).length >= 2, 10_000), since()).toBe(true);
      expect(since()).not.toMatch(/Connected to/);
      // The same certificate and key, presented afresh, are refused the same way.
      const direct = mqtt.connect(external ? mosquitto!.deviceUrl : `mqtts://127.0.0.1:${app.mqtt.port}`, {
        cert: fs.readFileSync(path.join(dir, 'certificate.pem')),
        key: fs.readFileSync(path.join(dir, 'key.pem')),
        ca: fs.readFileSync(path.join(dir, 'device-ca.pem')),
        reconnectPeriod: 0,
        connectTimeout: 5000,
      });
      const refused = await new Promise<string>((resolve) => {
        direct.once('connect', () => resolve('connected'));
        direct.once('error', (err) => resolve(err.message));
        direct.once('close', () => resolve('closed'));
      });
      direct.end(true);
      expect(refused).toMatch(refusal);

      expect((await deviceStatus()).status).toBe(404);
      const lock = await lockView();
      expect(lock.device ?? null).toBeNull();
      expect(lock.state.connected).toBe(true);
      // A sandbox lock again: the same user's unlock is the platform's to carry out.
      expect((await unlock()).status).toBe(204);
      expect((await stopDevice('SIGTERM')).code).toBe(0);
    });
  });
});
