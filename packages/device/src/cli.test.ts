import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopicPrefix, operationErrors } from '@latchkey/contract';
import { hashAccessCode } from './access-codes.js';
import { buildCli } from './cli-fixture.js';
import { createKeyAndCsr } from './provision.js';
import { StateDir } from './state-dir.js';
import { certifyCsr, configUser, createDeviceCa, createTestCa, issueLeaf, signConfig, signOperation, testConfig, unlockClaims, type TestCa, type TestUser } from './test-fixture.js';

/** The `latchkey-device` command as the package ships it, built once for this file. */
let command: Awaited<ReturnType<typeof buildCli>>;
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [command.cli, ...args], (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

let dir: string;
let state: StateDir;
let platformCa: TestCa;
let alice: TestUser;
const lockId = randomUUID();

beforeAll(async () => {
  command = await buildCli();
  dir = await mkdtemp(path.join(tmpdir(), 'latchkey-cli-'));
  state = new StateDir(dir);
  const deviceCa = await createDeviceCa();
  platformCa = await createTestCa();
  alice = await issueLeaf(platformCa);
  const deviceId = randomUUID();
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', await certifyCsr(deviceCa, csrPem, deviceId));
  await state.write('deviceCa', deviceCa.pem);
  await state.write('platformCa', platformCa.pem);
  await state.write('identity', JSON.stringify({ deviceId, lockId, mqttUrl: 'mqtts://127.0.0.1:1', topicPrefix: deviceTopicPrefix(deviceId), apiUrl: 'http://localhost/api' }));
  const accessCodes = [{ accessCodeId: 'front', hash: hashAccessCode('salt', '246810'), start: null, end: null }];
  await state.write('config', signConfig(platformCa, testConfig(lockId, [configUser(alice)], { version: 7, unlockTime: 1, accessCodeSalt: 'salt', accessCodes })));
});
afterAll(async () => {
  command?.remove();
  await rm(dir, { recursive: true, force: true });
});

// Each test waits on the command, started up to five times in turn: the cap is for one that hangs, and leaves
// room for starts that take seconds each on a busy host.
describe('latchkey-device', { timeout: 60_000 }, () => {
  it('execute decides from the stored config: DONE (exit 0), then REFUSED with the reason (exit 1) for the same operation', async () => {
    const jws = signOperation(alice, unlockClaims(alice, lockId));
    const first = await cli('execute', jws, '--dir', dir);
    expect(first.stdout.split('\n')[0]).toBe('DONE');
    expect(first.code).toBe(0);
    const again = await cli('execute', jws, '--dir', dir);
    expect(again).toMatchObject({ code: 1, stdout: `REFUSED ${operationErrors.replayed}\n` });
    // Both decisions wait in the state directory for the agent to tell the platform.
    expect(JSON.parse((await state.read('results'))!)).toMatchObject([
      { requestId: expect.stringMatching(/^local-/), outcome: 'DONE', state: { locked: false } },
      { outcome: 'REFUSED', reason: operationErrors.replayed, reasonKey: 'replayed' },
    ]);
  });

  it('status shows the device, its certificate and config', async () => {
    const { code, stdout } = await cli('status', '--dir', dir);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`Lock: +${lockId}`));
    expect(stdout).toMatch(/Config: +version 7, 1 users, unlock time 1 s/);
    expect(stdout).toMatch(/Offline codes: +not accepted/);
    expect(stdout).toMatch(/Events: +0 waiting to be delivered/);
    expect(stdout).not.toContain('undefined');
  });

  it('answers bad input with a message and exit code 2, never a stack trace', async () => {
    for (const args of [
      ['frob'],
      ['execute'],
      ['run', '--actuator', 'command', '--dir', dir],
      ['status', '--dir', path.join(dir, 'missing')],
      ['run', '--http-port', '99999'],
    ]) {
      const { code, stderr } = await cli(...args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(stderr.length).toBeGreaterThan(10);
    }
  });

  it('refuses a keypad other than stdin, a sensor command it cannot split, and a battery interval out of range, before starting', async () => {
    for (const [args, message] of [
      [['run', '--keypad', '/dev/ttyUSB0', '--dir', dir], /--keypad takes stdin/],
      [['run', '--door-sensor', '"unclosed', '--dir', dir], /--door-sensor must be a program and its arguments/],
      [['run', '--battery', '', '--dir', dir], /--battery must be a program and its arguments/],
      [['run', '--battery', 'cat /sys/class/power_supply/BAT0/capacity', '--battery-interval', '1', '--dir', dir], /--battery-interval must be a number of seconds from 10/],
    ] as const) {
      const { code, stderr } = await cli(...args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toMatch(message);
    }
  });

  it('run --keypad stdin answers each code on stdout, and --door-sensor and --battery turn their programs’ lines into events', async () => {
    const child = spawn(
      process.execPath,
      [
        command.cli,
        'run',
        '--dir',
        dir,
        '--keypad',
        'stdin',
        '--door-sensor',
        `/bin/sh -c "echo open; echo ajar; echo closed; exec sleep 600"`,
        '--battery',
        '/bin/echo 57%',
        '--battery-interval',
        '3600',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const eventTypes = async () =>
      ((await state.read('events')) ?? '')
        .split('\n')
        .filter(Boolean)
        .map((jws) => (JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()) as { type: string }).type);
    await expect.poll(eventTypes, { timeout: 15_000 }).toEqual(expect.arrayContaining(['door_opened', 'door_closed', 'battery']));

    child.stdin.write('246810\n\n000000\n');
    await expect.poll(() => stdout.split('\n').filter(Boolean), { timeout: 10_000 }).toEqual(['DONE', 'REFUSED This code does not open this lock']);
    await expect.poll(eventTypes).toEqual(expect.arrayContaining(['unlocked', 'access_denied']));
    expect(stderr).toMatch(/door sensor command printed a line it should not: "ajar"/);
    // The log went to stderr: stdout holds the answers alone.
    expect(stderr).toMatch(/running with the virtual actuator/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/SIGTERM: locking and disconnecting/);
  });
});
