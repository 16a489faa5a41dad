import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { lockErrors, lockMessages, operationErrors, type TimeRule } from '@latchkey/contract';
import { locks, lockShares } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, lockRow, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/** ADD_USER, REMOVE_USER and MUTATE_SETTING, the share and lock rules, and who may do what. */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let admin: KeyHolder;
let user: KeyHolder;
let dave: KeyHolder;
let stranger: KeyHolder;
let foreigner: KeyHolder;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
const HOUR = 3_600_000;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  const other = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId);
  admin = await certify(t, await appUserToken(sandbox, 'admin', 'admin@example.com'));
  user = await certify(t, await appUserToken(sandbox, 'user'));
  dave = await certify(t, await appUserToken(sandbox, 'dave', 'dave@example.com'));
  stranger = await certify(t, await appUserToken(sandbox, 'stranger'));
  foreigner = await certify(t, await appUserToken(other, 'foreigner'));
  await share(t, lockId, admin.userId, { role: 'ADMIN' });
  await share(t, lockId, user.userId, { role: 'USER' });
});
afterAll(() => t?.close());

const run = (holder: KeyHolder, operation: unknown, extra = {}) => execute(t, lockId, holder.token, signOperation(holder, lockId, operation, extra));
const shareOf = async (userId: string) => (await t.database.db.select().from(lockShares).where(eq(lockShares.userId, userId)))[0];
const expectRefused = async (res: Awaited<ReturnType<typeof run>>, status: number, message: string) => {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json().message.startsWith(message)).toBe(true);
  expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ rejected: true, reason: res.json().message });
};
/** A window of an hour that starts two hours from now, every day: never open now. */
function closedWindow(): TimeRule {
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return { start: hhmm(Date.now() + 2 * HOUR), end: hhmm(Date.now() + 3 * HOUR), timezone: 'UTC', days: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] };
}

describe('ADD_USER and REMOVE_USER', () => {
  it('lets an admin share the lock with bounds, and the new user unlock', async () => {
    const start = Math.floor(Date.now() / 1000) - 60;
    const res = await run(admin, { type: 'ADD_USER', user: dave.userId, publicKey: 'AAAA', role: 'USER', start, end: start + 3600 });
    expect(res.statusCode, res.body).toBe(204);
    expect(await shareOf(dave.userId)).toMatchObject({ role: 'USER', startsAt: new Date(start * 1000), endsAt: new Date((start + 3600) * 1000) });
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SHARE', rejected: false, subject: 'dave@example.com (USER)', actor: { email: 'admin@example.com' } });
    expect((await run(dave, UNLOCK)).statusCode).toBe(204);
  });

  it('changes a role by sharing again', async () => {
    expect((await run(admin, { type: 'ADD_USER', user: dave.userId, role: 'ADMIN' })).statusCode).toBe(204);
    expect(await shareOf(dave.userId)).toMatchObject({ role: 'ADMIN', startsAt: null, endsAt: null });
  });

  it('refuses users outside the application, and bounds that end before they start', async () => {
    await expectRefused(await run(admin, { type: 'ADD_USER', user: foreigner.userId }), 404, lockErrors.userNotFound);
    await expectRefused(await run(admin, { type: 'ADD_USER', user: crypto.randomUUID() }), 404, lockErrors.userNotFound);
    await expectRefused(await run(admin, { type: 'ADD_USER', user: stranger.userId, start: 2000, end: 1000 }), 400, lockMessages.endBeforeStart);
    expect(await shareOf(stranger.userId)).toBeUndefined();
  });

  it('revokes at once: the removed user is refused on the next operation', async () => {
    expect((await run(admin, { type: 'REMOVE_USER', users: [dave.userId] })).statusCode).toBe(204);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'REVOKE', subject: 'dave@example.com' });
    await expectRefused(await run(dave, UNLOCK), 403, operationErrors.noAccess);
    await expectRefused(await run(admin, { type: 'REMOVE_USER', users: [dave.userId] }), 404, lockErrors.shareNotFound);
  });

  it('is for admins only', async () => {
    await expectRefused(await run(user, { type: 'ADD_USER', user: stranger.userId }), 403, operationErrors.adminOnly);
    await expectRefused(await run(user, { type: 'REMOVE_USER', users: [admin.userId] }), 403, operationErrors.adminOnly);
    await expectRefused(await run(user, { type: 'MUTATE_SETTING', unlockDuration: 9 }), 403, operationErrors.adminOnly);
    await expectRefused(await run(stranger, UNLOCK), 403, operationErrors.noAccess);
    expect(await shareOf(stranger.userId)).toBeUndefined();
  });
});

describe('MUTATE_SETTING', () => {
  it('sets the unlock time that a MUTATE_LOCK without duration then uses', async () => {
    expect((await run(admin, { type: 'MUTATE_SETTING', unlockDuration: 12 })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockTime).toBe(12);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SETTINGS', subject: 'unlock time 12 s' });
    expect((await run(user, UNLOCK)).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockedUntil!.getTime() - Date.now()).toBeGreaterThan(10_000);
  });

  it('sets and clears the hours, which then bind every unlock', async () => {
    const window = closedWindow();
    expect((await run(admin, { type: 'MUTATE_SETTING', unlockBetween: { ...window, exceptions: [] } })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).usageRequirements).toEqual({ time: [window] });
    await expectRefused(await run(user, UNLOCK), 403, operationErrors.lockHours);
    // A duration beside a null unlockBetween (how the JVM SDK sends it) keeps the hours.
    expect((await run(admin, { type: 'MUTATE_SETTING', unlockDuration: 12, unlockBetween: null })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).usageRequirements).toEqual({ time: [window] });
    expect((await run(admin, { type: 'MUTATE_SETTING', unlockBetween: null })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).usageRequirements).toEqual({});
    expect((await run(user, UNLOCK)).statusCode).toBe(204);
  });

  it('needs something to set', async () => {
    await expectRefused(await run(admin, { type: 'MUTATE_SETTING' }), 400, operationErrors.operationInvalid);
  });
});

describe('share terms and lock rules', () => {
  it('refuses a share outside its bounds or its window', async () => {
    await share(t, lockId, stranger.userId, { endsAt: new Date(Date.now() - 1000) });
    await expectRefused(await run(stranger, UNLOCK), 403, operationErrors.shareEnded);
    await share(t, lockId, stranger.userId, { startsAt: new Date(Date.now() + HOUR), endsAt: null });
    await expectRefused(await run(stranger, UNLOCK), 403, operationErrors.shareNotStarted);
    await share(t, lockId, stranger.userId, { startsAt: null, timeWindow: closedWindow() });
    await expectRefused(await run(stranger, UNLOCK), 403, operationErrors.shareWindow);
    await share(t, lockId, stranger.userId, { timeWindow: null });
    expect((await run(stranger, UNLOCK)).statusCode).toBe(204);
  });

  it('needs a close and accurate enough position when the lock says so', async () => {
    const rule = { latitude: 51.5, longitude: -0.12, radius: 50, accuracy: 'HIGH' as const, enabled: true };
    await t.database.db.update(locks).set({ usageRequirements: { location: rule } }).where(eq(locks.id, lockId));
    await expectRefused(await run(user, UNLOCK), 403, operationErrors.locationRequired);
    await expectRefused(await run(user, UNLOCK, { location: { latitude: 51.51, longitude: -0.12, accuracy: 5 } }), 403, operationErrors.locationTooFar);
    await expectRefused(await run(user, UNLOCK, { location: { latitude: 51.5, longitude: -0.12, accuracy: 50 } }), 403, operationErrors.locationInaccurate);
    expect((await run(user, UNLOCK, { location: { latitude: 51.5001, longitude: -0.1201, accuracy: 8 } })).statusCode).toBe(204);
    expect((await run(user, { ...UNLOCK, location: { latitude: 51.5, longitude: -0.12, accuracy: 3 } })).statusCode).toBe(204);
  });
});
