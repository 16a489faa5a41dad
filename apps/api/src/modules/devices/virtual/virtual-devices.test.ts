import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { deviceLogReasons, operationErrors } from '@latchkey/contract';
import { deviceRefusals, type LockController } from '@latchkey/device';
import { locks, lockShares } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, lockRow, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * A sandbox lock is a virtual device: the platform checks an operation, then the lock's own controller
 * (@latchkey/device, in-process) checks it again from its config and acts, and only then is it applied.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let alice: KeyHolder;
let bob: KeyHolder;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 7 });
  alice = await certify(t, await appUserToken(sandbox, 'alice'));
  bob = await certify(t, await appUserToken(sandbox, 'bob'));
  await share(t, lockId, alice.userId, { role: 'ADMIN' });
});
afterAll(() => t?.close());
afterEach(() => vi.restoreAllMocks());

const run = (holder: KeyHolder, operation: unknown, extra = {}) => execute(t, lockId, holder.token, signOperation(holder, lockId, operation, extra));
const controller = (): LockController => {
  const found = t.app.virtualDevices.controllerOf(lockId);
  if (!found) throw new Error('no virtual device for the lock');
  return found;
};
const configUserIds = () => controller().config?.users.map((u) => u.userId) ?? [];

describe('a sandbox lock’s virtual device', () => {
  it('is made on first use with the config a real device gets, and moves with every accepted unlock', async () => {
    expect(t.app.virtualDevices.controllerOf(lockId)).toBeUndefined();
    const before = Date.now();
    const res = await run(alice, UNLOCK);
    expect(res.statusCode, res.body).toBe(204);
    const lock = controller();
    expect(lock.config).toMatchObject({ lockId, unlockTime: 7, users: expect.arrayContaining([expect.objectContaining({ userId: alice.userId, role: 'ADMIN' })]) });
    expect(lock.config!.users.map((u) => u.userId)).toContain(sandbox.owner.userId);
    expect(lock.state.locked).toBe(false);
    expect(lock.state.unlockedUntil).toBeGreaterThanOrEqual(before + 7000);
    expect((await lockRow(t, lockId)).unlockedUntil).not.toBeNull();
    // The lock view still says it has no device of its own: the portal shows it as a virtual (sandbox) lock.
    const view = await t.app.inject({ method: 'GET', url: `/api/device/${lockId}`, headers: { authorization: `Bearer ${alice.token}` } });
    expect(view.json()).toMatchObject({ id: lockId });
    expect(view.json().device ?? null).toBeNull();
  });

  it('sees each operation once, exactly as signed, on the batched path too', async () => {
    const handle = vi.spyOn(controller(), 'handle');
    const jws = signOperation(alice, lockId, { ...UNLOCK, duration: 3 });
    expect((await execute(t, lockId, alice.token, jws)).statusCode).toBe(204);
    expect(handle).toHaveBeenCalledTimes(1);
    expect(handle).toHaveBeenCalledWith(jws);
    expect((await handle.mock.results[0]!.value).outcome).toBe('DONE');
    // A lock operation closes the virtual lock at once.
    expect((await run(alice, { type: 'MUTATE_LOCK', locked: true })).statusCode).toBe(204);
    expect(controller().state).toEqual({ locked: true, unlockedUntil: null });
  });

  it('answers a replay as the platform does, and applies nothing', async () => {
    const jws = signOperation(alice, lockId, UNLOCK);
    expect((await execute(t, lockId, alice.token, jws)).statusCode).toBe(204);
    const again = await execute(t, lockId, alice.token, jws);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(operationErrors.replayed);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, reason: operationErrors.replayed });
  });

  it('refuses what its own actuator could not do: 403 with the device’s reason, logged as the device’s, nothing applied', async () => {
    await run(alice, { type: 'MUTATE_LOCK', locked: true });
    const until = (await lockRow(t, lockId)).unlockedUntil;
    vi.spyOn(controller().actuator, 'unlock').mockRejectedValueOnce(new Error('the strike is jammed'));
    const res = await run(alice, UNLOCK);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().message).toBe(deviceRefusals.actuatorFailed);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'UNLOCK', rejected: true, reason: deviceLogReasons.refused(deviceRefusals.actuatorFailed) });
    expect((await lockRow(t, lockId)).unlockedUntil).toEqual(until);
    expect(controller().state.locked).toBe(true);
    // The next one moves it again.
    expect((await run(alice, UNLOCK)).statusCode).toBe(204);
  });

  it('enforces the lock’s location rule as the platform does', async () => {
    const rule = { latitude: 51.5, longitude: -0.12, radius: 50, accuracy: 'FINE' as const, enabled: true };
    await t.database.db.update(locks).set({ usageRequirements: { location: rule } }).where(eq(locks.id, lockId));
    const away = await run(alice, UNLOCK, { location: { latitude: 48.85, longitude: 2.35, accuracy: 5 } });
    expect(away.statusCode).toBe(403);
    expect(away.json().message.startsWith(operationErrors.locationTooFar)).toBe(true);
    const handle = vi.spyOn(controller(), 'handle');
    const here = await run(alice, UNLOCK, { location: { latitude: 51.5, longitude: -0.12, accuracy: 5 } });
    expect(here.statusCode, here.body).toBe(204);
    // The device decided with the rule in its config, whether or not the lock's notice had arrived yet.
    expect(handle).toHaveBeenCalledTimes(1);
    expect(controller().config!.usageRequirements.location).toMatchObject(rule);
    await t.database.db.update(locks).set({ usageRequirements: {} }).where(eq(locks.id, lockId));
  });
});

describe('its config', () => {
  it('follows a change to the lock’s settings', async () => {
    await t.database.db.update(locks).set({ unlockTime: 11 }).where(eq(locks.id, lockId));
    await vi.waitFor(() => expect(controller().config!.unlockTime).toBe(11), { timeout: 5000, interval: 50 });
    const before = Date.now();
    expect((await run(alice, UNLOCK)).statusCode).toBe(204);
    expect(controller().state.unlockedUntil).toBeGreaterThanOrEqual(before + 11_000);
  });

  it('follows shares given and revoked, and a new user can unlock at once', async () => {
    expect(configUserIds()).not.toContain(bob.userId);
    await share(t, lockId, bob.userId);
    // At once, whether or not the share's notice has arrived: a config that does not know the caller is built again first.
    expect((await run(bob, UNLOCK)).statusCode).toBe(204);
    expect(configUserIds()).toContain(bob.userId);
    await t.database.db.delete(lockShares).where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, bob.userId)));
    await vi.waitFor(() => expect(configUserIds()).not.toContain(bob.userId), { timeout: 5000, interval: 20 });
    const res = await run(bob, UNLOCK);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe(operationErrors.noAccess);
  });

  it('takes an admin’s share given by a signed operation, checked by the device too', async () => {
    const handle = vi.spyOn(controller(), 'handle');
    expect((await run(alice, { type: 'ADD_USER', user: bob.userId, role: 'USER' })).statusCode).toBe(204);
    expect(await handle.mock.results[0]!.value).toMatchObject({ outcome: 'DONE', operation: { type: 'ADD_USER' }, userId: alice.userId });
    await vi.waitFor(() => expect(configUserIds()).toContain(bob.userId), { timeout: 5000, interval: 20 });
  });

  it('is built again when it was left stale, before the device decides', async () => {
    const lock = controller();
    // As if every notice had been lost: a config that no longer knows alice.
    lock.setConfig({ ...lock.config!, users: lock.config!.users.filter((u) => u.userId !== alice.userId) });
    expect(configUserIds()).not.toContain(alice.userId);
    expect((await run(alice, UNLOCK)).statusCode).toBe(204);
    expect(configUserIds()).toContain(alice.userId);
  });

  it('is forgotten with its lock', async () => {
    const gone = await createLock(t, sandbox.applicationId, { name: 'Shed' });
    await share(t, gone, alice.userId);
    expect((await execute(t, gone, alice.token, signOperation(alice, gone, UNLOCK))).statusCode).toBe(204);
    expect(t.app.virtualDevices.controllerOf(gone)).toBeDefined();
    await t.database.db.delete(locks).where(eq(locks.id, gone));
    await vi.waitFor(() => expect(t.app.virtualDevices.controllerOf(gone)).toBeUndefined(), { timeout: 5000, interval: 50 });
  });
});
