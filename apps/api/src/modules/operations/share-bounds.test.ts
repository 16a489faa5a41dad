import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { operationErrors, type TimeRule } from '@latchkey/contract';
import { lockShares } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * An operation may not widen its signer's own share, and an admin may not give anyone
 * access beyond their own — a share they give (their own included) ends no later than theirs, and carries
 * their hours when they have a time window. Owners (portal users) have no bounds.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let admin: KeyHolder;
let friend: KeyHolder;
const HOUR = 3600;
const now = () => Math.floor(Date.now() / 1000);
let adminEnd: number;
const WINDOW: TimeRule = { start: '00:00', end: '00:00', timezone: 'UTC', days: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] };

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId);
  admin = await certify(t, await appUserToken(sandbox, 'bounded-admin'));
  friend = await certify(t, await appUserToken(sandbox, 'friend'));
  adminEnd = now() + HOUR;
  await share(t, lockId, admin.userId, { role: 'ADMIN', endsAt: new Date(adminEnd * 1000), timeWindow: WINDOW });
});
afterAll(() => t?.close());

const run = (holder: KeyHolder, operation: unknown) => execute(t, lockId, holder.token, signOperation(holder, lockId, operation));
const shareOf = async (userId: string) => (await t.database.db.select().from(lockShares).where(and(eq(lockShares.userId, userId), eq(lockShares.lockId, lockId))))[0];
async function expectRefused(res: Awaited<ReturnType<typeof run>>, message: string) {
  expect(res.statusCode, res.body).toBe(403);
  expect(res.json().message).toBe(message);
  expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SHARE', rejected: true, reason: message });
}

describe('an admin with a time-limited share', () => {
  it('cannot lift their own end: ADD_USER on themselves with end null or later is refused, and the share is unchanged', async () => {
    await expectRefused(await run(admin, { type: 'ADD_USER', user: admin.userId, role: 'ADMIN', end: null }), operationErrors.shareSelfWiden);
    await expectRefused(await run(admin, { type: 'ADD_USER', user: admin.userId, role: 'ADMIN', end: adminEnd + 60 }), operationErrors.shareSelfWiden);
    expect(await shareOf(admin.userId)).toMatchObject({ role: 'ADMIN', endsAt: new Date(adminEnd * 1000), timeWindow: WINDOW });
  });

  it('may narrow their own share', async () => {
    const res = await run(admin, { type: 'ADD_USER', user: admin.userId, role: 'ADMIN', end: adminEnd - 60 });
    expect(res.statusCode, res.body).toBe(204);
    adminEnd -= 60;
    expect(await shareOf(admin.userId)).toMatchObject({ role: 'ADMIN', endsAt: new Date(adminEnd * 1000), timeWindow: WINDOW });
  });

  it('cannot give anyone a share that outlives their own', async () => {
    await expectRefused(await run(admin, { type: 'ADD_USER', user: friend.userId, role: 'ADMIN' }), operationErrors.shareBeyondOwn);
    await expectRefused(await run(admin, { type: 'ADD_USER', user: friend.userId, role: 'USER', end: adminEnd + 1 }), operationErrors.shareBeyondOwn);
    expect(await shareOf(friend.userId)).toBeUndefined();
  });

  it('gives shares within their own, which carry their hours', async () => {
    const res = await run(admin, { type: 'ADD_USER', user: friend.userId, role: 'ADMIN', start: now() - 60, end: adminEnd });
    expect(res.statusCode, res.body).toBe(204);
    expect(await shareOf(friend.userId)).toMatchObject({ role: 'ADMIN', endsAt: new Date(adminEnd * 1000), timeWindow: WINDOW });
    // And the admin they made is bound the same way: no step beyond the first admin's end.
    await expectRefused(await run(friend, { type: 'ADD_USER', user: admin.userId, role: 'ADMIN', end: null }), operationErrors.shareBeyondOwn);
  });

  it('an owner (portal user) still gives open-ended shares', async () => {
    const owner = await certify(t, sandbox.owner.token);
    const res = await run(owner, { type: 'ADD_USER', user: admin.userId, role: 'ADMIN', end: null });
    expect(res.statusCode, res.body).toBe(204);
    expect(await shareOf(admin.userId)).toMatchObject({ endsAt: null });
  });
});
