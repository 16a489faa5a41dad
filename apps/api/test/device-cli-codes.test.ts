import 'reflect-metadata';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { asc, eq } from 'drizzle-orm';
import { deviceTopic, type AccessCode, type DeviceCreated, type Lock, type LockLogEntry } from '@latchkey/contract';
import { buildApp } from '../src/app.js';
import { lockActivity, lockDevices } from '../src/db/schema.js';
import { deviceCrl } from '../src/modules/devices/device-binding.service.js';
import { createTestApp, eventually, type TestApp } from './helpers.js';
import { MOSQUITTO, startMosquitto, type Mosquitto } from './fixtures/mosquitto.js';
import { createLock, createSandbox, type Sandbox } from './fixtures/operations.js';
import { bearer } from './fixtures/platform-users.js';
import { buildDeviceCli, DEVICE_PACKAGE } from './fixtures/device-cli.js';

/**
 * A real `latchkey-device` process (the command as the package builds it) with a keypad on its standard
 * input, a door-sensor program and a battery program: the owner's codes reach it and open the door, its
 * signed events reach the lock's activity, and its chain survives a power cut.
 */

/** The command as shipped (the package's own build, bundled): built once per run, it starts in a fraction of tsx's time. */
let cli: string;
let removeCli: (() => void) | undefined;
const BATTERY = 57;
/** The lock's unlock time: the device locks itself again this long after an unlock, and reports it. */
const UNLOCK_TIME_S = 1;

/** A `latchkey-device` process in a process group of its own, so a power cut takes its sensor programs with it. */
interface DeviceProcess {
  child: ChildProcess;
  /** What it answered on standard output (the keypad's answers), one line each. */
  readonly answers: string[];
  readonly log: string;
  exited: Promise<unknown>;
}

const groups = new Set<number>();

function latchkeyDevice(...args: string[]): DeviceProcess {
  const child = spawn(process.execPath, [cli, ...args], { cwd: DEVICE_PACKAGE, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  groups.add(child.pid!);
  let stdout = '';
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stdin!.on('error', () => undefined);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    get answers() {
      return stdout.split('\n').filter(Boolean);
    },
    get log() {
      return `${stdout}${log}`;
    },
    exited,
  };
}

/** Ends the device and every program it started, as a power cut would. */
async function powerCut(device: DeviceProcess): Promise<void> {
  process.kill(-device.child.pid!, 'SIGKILL');
  groups.delete(device.child.pid!);
  await device.exited;
}

beforeAll(async () => {
  ({ cli, remove: removeCli } = await buildDeviceCli());
});
afterAll(() => removeCli?.());

const BROKERS = [
  { broker: 'the embedded broker', external: false },
  { broker: 'Mosquitto 2 (MQTT_URL)', external: true },
] as const;

describe.each(BROKERS)('a latchkey-device process with a keypad and sensors, through $broker', ({ external }) => {
  describe.skipIf(external && !MOSQUITTO)('codes and door events', () => {
    let t: TestApp;
    let app: FastifyInstance;
    let mosquitto: Mosquitto | undefined;
    let sandbox: Sandbox;
    let lockId: string;
    let deviceId: string;
    let dir: string;
    let fifo: string;
    let device: DeviceProcess;
    /** When a code was last typed at the keypad (the device's unlock, if it opens, is after it). */
    let typedAt = 0;

    const base = () => `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`;
    const owner = () => bearer(sandbox.owner.token);
    const createCode = async (payload: Record<string, unknown>): Promise<AccessCode> => {
      const res = await app.inject({ method: 'POST', url: `${base()}/access-code`, headers: owner(), payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as AccessCode;
    };
    const codes = async () => (await app.inject({ method: 'GET', url: `${base()}/access-code`, headers: owner() })).json() as AccessCode[];
    const statusOf = async (accessCodeId: string) => (await codes()).find((code) => code.accessCodeId === accessCodeId)?.status;
    const lockView = async () => (await app.inject({ method: 'GET', url: base(), headers: owner() })).json() as Lock;
    const log = async () => (await app.inject({ method: 'GET', url: `${base()}/log?pageSize=100`, headers: owner() })).json() as { items: LockLogEntry[] };
    const fromDevice = async () => (await log()).items.filter((entry) => entry.source === 'device').reverse();
    /** Waits for an entry the device reported that `match` picks, and answers it. */
    const logged = async (match: (entry: LockLogEntry) => boolean) => {
      expect(await eventually(async () => (await fromDevice()).some(match), 10_000), device.log).toBe(true);
      return (await fromDevice()).find(match)!;
    };
    /** Types a code at the keypad and answers what the device printed for it. */
    const type = async (code: string) => {
      const before = device.answers.length;
      typedAt = Date.now();
      device.child.stdin!.write(`${code}\n`);
      expect(await eventually(() => device.answers.length > before, 10_000), device.log).toBe(true);
      return device.answers[before]!;
    };
    /** Tells the door sensor program to print a line. */
    const door = (line: 'open' | 'closed') => fs.promises.writeFile(fifo, `${line}\n`);
    const runDevice = async () => {
      fs.rmSync(path.join(dir, 'config.jws'), { force: true });
      device = latchkeyDevice(
        'run',
        '--dir',
        dir,
        '--actuator',
        'virtual',
        '--keypad',
        'stdin',
        '--door-sensor',
        `${path.join(dir, 'door-sensor.sh')} ${fifo}`,
        '--battery',
        path.join(dir, 'battery.sh'),
      );
      const online = await eventually(async () => (await lockView()).device?.connected === true && fs.existsSync(path.join(dir, 'config.jws')), 15_000);
      expect(online, device.log).toBe(true);
    };

    beforeAll(async () => {
      t = await createTestApp({ HOST: '127.0.0.1', MQTT_PORT: '0', MQTT_PUBLIC_URL: 'mqtts://127.0.0.1:0' });
      app = t.app;
      if (external) {
        mosquitto = await startMosquitto(t.app.deviceCa, await deviceCrl(t.app.db, t.app.deviceCa));
        app = await buildApp({ ...t.app.config, mqtt: { ...t.app.config.mqtt, url: mosquitto.url, publicUrl: mosquitto.deviceUrl } }, { database: t.database, logger: false });
      } else {
        await app.mqtt.listen();
      }
      const origin = (await app.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '');
      sandbox = await createSandbox(t);
      lockId = await createLock(t, sandbox.applicationId, { unlockTime: UNLOCK_TIME_S });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-device-codes-'));
      fifo = path.join(dir, 'door.fifo');
      execFileSync('mkfifo', [fifo]);
      // A door sensor that prints what the test writes into its fifo; a battery gauge that prints a level and exits.
      fs.writeFileSync(path.join(dir, 'door-sensor.sh'), '#!/bin/sh\nwhile :; do cat "$1" || exit 1; done\n', { mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'battery.sh'), `#!/bin/sh\necho ${BATTERY}\n`, { mode: 0o755 });

      const res = await app.inject({ method: 'POST', url: `${base()}/device`, headers: owner() });
      expect(res.statusCode, res.body).toBe(201);
      const created = res.json() as DeviceCreated;
      deviceId = created.deviceId;
      const provisioned = latchkeyDevice('provision', '--api', `${origin}/api`, '--code', created.provisioningCode, '--dir', dir);
      provisioned.child.stdin!.end();
      expect(await provisioned.exited, provisioned.log).toBe(0);
      groups.delete(provisioned.child.pid!);
      await runDevice();
    }, 60_000);

    afterAll(async () => {
      for (const pid of groups) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (app && app !== t?.app) await app.close();
      await mosquitto?.close();
      await t?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('an online code reaches the device (`set`) and opens it at the keypad: DONE, and the UNLOCK is the device’s, by that code', async () => {
      const code = await createCode({ name: 'Cleaner', code: '246810' });
      expect(code.status).toBe('setting');
      expect(await eventually(async () => (await statusOf(code.accessCodeId)) === 'set', 10_000), device.log).toBe(true);
      expect(await type('246810')).toBe('DONE');
      const entry = await logged((e) => e.type === 'UNLOCK' && !e.rejected);
      expect(entry).toMatchObject({ method: 'access_code', source: 'device', accessCodeId: code.accessCodeId, subject: 'Cleaner', offline: false });
    });

    it('a wrong code → REFUSED at the keypad and an access_denied entry from the device', async () => {
      const answer = await type('13579');
      expect(answer).toMatch(/^REFUSED \S/);
      const entry = await logged((e) => e.type === 'UNLOCK' && e.rejected);
      expect(entry).toMatchObject({ method: 'access_code', source: 'device', accessCodeId: null });
    });

    it('an offline code created while the device is connected opens it', async () => {
      const start = Math.floor(Date.now() / 3_600_000) * 3600;
      const code = await createCode({ name: 'Courier', kind: 'offline', start, end: start + 2 * 3600 });
      expect(code.status).toBe('set');
      expect(await type(code.code)).toBe('DONE');
      await logged((e) => e.type === 'UNLOCK' && e.accessCodeId === code.accessCodeId);
    });

    it('the door sensor’s lines are DOOR_OPENED and DOOR_CLOSED entries and the lock’s door; the battery program’s level is a BATTERY entry and the lock’s battery', async () => {
      await door('open');
      await logged((e) => e.type === 'DOOR_OPENED');
      expect((await lockView()).door).toBe('open');
      await door('closed');
      await logged((e) => e.type === 'DOOR_CLOSED');
      expect((await lockView()).door).toBe('closed');
      expect(await logged((e) => e.type === 'BATTERY')).toMatchObject({ value: BATTERY, source: 'device' });
      expect((await lockView()).battery).toBe(BATTERY);
    });

    it('two codes created back to back are both `set` once the device confirms them, while its other reports are held to the rate', async () => {
      const limiter = app.deviceRuntime.reportLimiter;
      // The pacing clock held still: the device's bucket, once empty, gives no token back.
      const clock = vi.spyOn(limiter, 'clock').mockReturnValue(Date.now());
      try {
        while (limiter.take(deviceId));
        const first = await createCode({ name: 'First', code: '1111' });
        const second = await createCode({ name: 'Second', code: '2222' });
        const bothSet = async () => (await statusOf(first.accessCodeId)) === 'set' && (await statusOf(second.accessCodeId)) === 'set';
        expect(await eventually(bothSet, 10_000), device.log).toBe(true);
        expect(limiter.take(deviceId)).toBe(false);
      } finally {
        clock.mockRestore();
      }
      expect(await type('2222')).toBe('DONE');
    });

    // The service's publish on the device's topic reaches the service as the device's: the reports below are forged in its name.
    it('states past the rate that confirm no config version the device was sent are held to the rate, and the latest recorded once it allows', async () => {
      const limiter = app.deviceRuntime.reportLimiter;
      const row = async () => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, deviceId)))[0]!;
      const firmware = async () => (await row()).firmware;
      // The device holds and has confirmed the last config it was sent: a real confirmation would supersede the held state.
      const confirmed = async () => {
        const { configVersion, configAckedVersion } = await row();
        return configAckedVersion === configVersion && app.deviceRuntime.reissuer.lastSentTo(deviceId)?.version === configVersion;
      };
      expect(await eventually(confirmed)).toBe(true);
      // The device locks itself again UNLOCK_TIME_S after the last code opened it and reports that state itself;
      // arriving after the forged states below, it would be the latest held instead of them. So that report is
      // seen on the broker first (retained, or when it comes), and nothing of the device's is on its way.
      const states: { locked?: boolean; at?: string }[] = [];
      await app.deviceBus.subscribe(deviceTopic(deviceId, 'state'), (_topic, payload) => void states.push(JSON.parse(payload.toString()) as { locked?: boolean; at?: string }));
      const relocked = () => states.some((state) => state.locked === true && Date.parse(state.at ?? '') >= typedAt + UNLOCK_TIME_S * 1000);
      expect(await eventually(relocked, 10_000)).toBe(true);
      await app.deviceRuntime.settled();
      const sent = app.deviceRuntime.reissuer.lastSentTo(deviceId)!.version;
      const clock = vi.spyOn(limiter, 'clock').mockReturnValue(Date.now());
      try {
        while (limiter.take(deviceId));
        for (const [i, configVersion] of [undefined, sent + 1, sent + 2].entries()) {
          const state = { locked: true, firmware: `past the rate ${i}`, at: new Date().toISOString(), ...(configVersion === undefined ? {} : { configVersion }) };
          await app.deviceBus.publish(deviceTopic(deviceId, 'state'), JSON.stringify(state));
        }
        await app.deviceRuntime.settled();
        expect(await firmware()).toMatch(/^latchkey-device /);
      } finally {
        clock.mockRestore();
      }
      expect(await eventually(async () => (await firmware()) === 'past the rate 2', 10_000)).toBe(true);
    });

    it('a power cut with nothing typed, then a restart: an offline code made meanwhile opens it, and its event chain goes on with no gap', async () => {
      const before = (await fromDevice()).length;
      await powerCut(device);
      const start = Math.floor(Date.now() / 3_600_000) * 3600;
      const code = await createCode({ name: 'Plumber', kind: 'offline', start, end: start + 3600 });
      await runDevice();
      expect(await type(code.code)).toBe('DONE');
      await logged((e) => e.type === 'UNLOCK' && e.accessCodeId === code.accessCodeId);
      expect((await fromDevice()).length).toBeGreaterThan(before);

      const rows = await t.database.db.select().from(lockActivity).where(eq(lockActivity.lockId, lockId)).orderBy(asc(lockActivity.deviceSeq));
      expect(rows.map((row) => row.type)).not.toContain('AUDIT_GAP');
      const seqs = rows.filter((row) => row.source === 'device').map((row) => row.deviceSeq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    });
  });
});
