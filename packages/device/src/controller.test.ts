import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationErrors } from '@latchkey/contract';
import { CommandActuator, VirtualActuator, type Actuator } from './actuators.js';
import { LockController } from './controller.js';
import { deviceRefusals } from './refusals.js';
import { configUser, createTestCa, issueLeaf, signConfig, signOperation, testConfig, unlockClaims, type TestCa, type TestUser } from './test-fixture.js';

const LOCK = randomUUID();
let ca: TestCa;
let alice: TestUser;
let admin: TestUser;

beforeAll(async () => {
  ca = await createTestCa();
  [alice, admin] = await Promise.all([issueLeaf(ca), issueLeaf(ca)]);
});

const controller = (actuator: Actuator = new VirtualActuator()) =>
  new LockController({ lockId: LOCK, platformCa: ca.pem, actuator, config: testConfig(LOCK, [configUser(alice), configUser(admin, { role: 'ADMIN' })]) });
const op = (user: TestUser, operation: Record<string, unknown>) => signOperation(user, unlockClaims(user, LOCK, Date.now(), { operation }));

describe('LockController', () => {
  it('unlocks for the operation’s duration, then locks again by itself', async () => {
    const actuator = new VirtualActuator();
    const lock = controller(actuator);
    const before = Date.now();
    const result = await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false, duration: 1 }));
    expect(result).toMatchObject({ outcome: 'DONE', state: { locked: false }, userId: alice.userId });
    expect(result.state.unlockedUntil).toBeGreaterThanOrEqual(before + 1000);
    expect(actuator.locked).toBe(false);
    const [relocked] = await once(lock, 'state');
    expect(relocked).toEqual({ locked: true, unlockedUntil: null });
    expect(actuator.locked).toBe(true);
  });

  it('uses the config’s unlockTime when the operation gives no duration, and locks at once on a lock', async () => {
    const lock = controller();
    const before = Date.now();
    const opened = await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false }));
    expect(opened.state.unlockedUntil! - before).toBeGreaterThanOrEqual(5000);
    expect(opened.state.unlockedUntil! - before).toBeLessThan(6000);
    const closed = await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: true }));
    expect(closed).toMatchObject({ outcome: 'DONE', state: { locked: true, unlockedUntil: null } });
  });

  it('refuses without moving, and answers an admin operation DONE without moving', async () => {
    const actuator = new VirtualActuator();
    const lock = controller(actuator);
    const moves: boolean[] = [];
    actuator.on('change', (locked) => moves.push(locked));
    expect(await lock.handle(op(alice, { type: 'MUTATE_SETTING', unlockDuration: 9 }))).toMatchObject({ outcome: 'REFUSED', reason: operationErrors.adminOnly, state: { locked: true } });
    const share = await lock.handle(op(admin, { type: 'ADD_USER', user: randomUUID() }));
    expect(share).toMatchObject({ outcome: 'DONE', operation: { type: 'ADD_USER', role: 'USER' }, state: { locked: true } });
    expect(moves).toEqual([]);
  });

  it('refuses everything before a config and takes a signed one, ignoring an older one', async () => {
    const lock = new LockController({ lockId: LOCK, platformCa: ca.pem });
    expect(await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false }))).toMatchObject({ outcome: 'REFUSED', reason: deviceRefusals.noConfig });
    expect(lock.applyConfig(signConfig(ca, testConfig(LOCK, [configUser(alice)], { version: 2 }))).ok).toBe(true);
    expect(lock.applyConfig(signConfig(ca, testConfig(LOCK, [], { version: 1 })))).toMatchObject({ ok: false });
    expect(lock.config?.version).toBe(2);
    expect(await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false }))).toMatchObject({ outcome: 'DONE' });
    await lock.close({ lock: true });
    expect(lock.state.locked).toBe(true);
  });

  it('answers REFUSED when the actuator fails, and the state stays as it was', async () => {
    const lock = controller(new CommandActuator({ unlockCommand: '/bin/sh -c "exit 1"', lockCommand: 'true' }));
    expect(await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false }))).toEqual({
      outcome: 'REFUSED',
      reason: deviceRefusals.actuatorFailed,
      state: { locked: true, unlockedUntil: null },
    });
  });

  it('drives a command actuator: the relay program runs for the unlock and again for the lock', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-controller-'));
    const file = path.join(dir, 'relay');
    const lock = controller(new CommandActuator({ unlockCommand: `/bin/sh -c 'echo 17=1 >> "$0"' ${file}`, lockCommand: `/bin/sh -c 'echo 17=0 >> "$0"' ${file}` }));
    await lock.handle(op(alice, { type: 'MUTATE_LOCK', locked: false, duration: 1 }));
    expect(await readFile(file, 'utf8')).toBe('17=1\n');
    await once(lock, 'state');
    expect(await readFile(file, 'utf8')).toBe('17=1\n17=0\n');
    await rm(dir, { recursive: true, force: true });
  });
});
