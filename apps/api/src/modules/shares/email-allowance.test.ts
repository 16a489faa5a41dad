import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { ACCOUNT_INVITATION_LIMIT, APPLICATION_EMAIL_LIMIT, emailLimitErrors, UNVERIFIED_EMAIL_LIMIT } from '@latchkey/contract';
import { applicationUsers, sentEmails, tileSignInTokens, users } from '../../db/schema.js';
import { settleAccountMail } from '../account/account-trust.service.js';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, createLock, createSandbox, share, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * The platform sends email for an application only within that application's allowance: while none of its
 * owners has verified their address, the owners' daily allowance (whoever asks); and at most
 * APPLICATION_EMAIL_LIMIT invitations and key emails an hour. Inviting someone new through the SDKs
 * (POST /share/invite/{email}) takes an admin of one of its locks.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ DIRECTORY_RATE_LIMIT_MAX: '1000' });
});
afterAll(() => t?.close());

async function userIdOf(token: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { userId: string }).userId;
}
/** An application user of the sandbox, with a share of `lockId` when a role is given. */
async function person(sandbox: Sandbox, sub: string, lockId: string, share_?: Parameters<typeof share>[3]) {
  const token = await appUserToken(sandbox, sub);
  const id = await userIdOf(token);
  if (share_) await share(t, lockId, id, share_);
  return { token, id };
}
const invite = (token: string, email: string) => t.app.inject({ method: 'POST', url: `/api/share/invite/${encodeURIComponent(email)}`, headers: bearer(token) });
const made = async (email: string) => (await t.database.db.select().from(applicationUsers).where(sql`lower(${applicationUsers.email}) = ${email}`)).length;
const sentFor = async (applicationId: string) => (await t.database.db.select().from(sentEmails).where(eq(sentEmails.applicationId, applicationId))).length;
const unverify = (userId: string) => t.database.db.update(users).set({ emailVerified: false }).where(eq(users.id, userId));

describe('an application none of whose owners has verified their address', () => {
  it('sends at most 5 emails a day for it, however many users it mints: the next invitation is a clear 429, nobody is made and nothing is sent', async () => {
    const sandbox = await createSandbox(t);
    await unverify(sandbox.owner.userId);
    const lockId = await createLock(t, sandbox.applicationId);
    // Each invitation through another minted admin: the allowance is the application's owners', not the caller's.
    for (let i = 0; i < UNVERIFIED_EMAIL_LIMIT.max; i++) {
      const admin = await person(sandbox, `minted-${i}`, lockId, { role: 'ADMIN' });
      const res = await invite(admin.token, uniqueEmail('victim'));
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(await sentFor(sandbox.applicationId)).toBe(UNVERIFIED_EMAIL_LIMIT.max);
    const admin = await person(sandbox, 'minted-last', lockId, { role: 'ADMIN' });
    const victim = uniqueEmail('victim');
    const refused = await invite(admin.token, victim);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: 429, message: emailLimitErrors.applicationUnverified });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3600);
    expect(await made(victim)).toBe(0);
    expect(await sentFor(sandbox.applicationId)).toBe(UNVERIFIED_EMAIL_LIMIT.max);
    // The owner's own shares by email draw on the same allowance.
    const byOwner = await t.app.inject({
      method: 'POST',
      url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/user`,
      headers: bearer(sandbox.owner.token),
      payload: { email: victim },
    });
    expect(byOwner.statusCode).toBe(429);
    expect(await made(victim)).toBe(0);
    // Once an owner has verified their address, the application sends again.
    await t.database.db.update(users).set({ emailVerified: true }).where(eq(users.id, sandbox.owner.userId));
    expect((await invite(admin.token, victim)).statusCode).toBe(200);
    expect(await made(victim)).toBe(1);
  });

  it('a tile’s sign-in links count against the same allowance: once it is spent, none is sent', async () => {
    const sandbox = await createSandbox(t);
    await unverify(sandbox.owner.userId);
    const lockId = await createLock(t, sandbox.applicationId);
    const tileId = randomUUID();
    const guest = await person(sandbox, 'tile-guest', lockId, { role: 'USER' });
    const admin = await person(sandbox, 'tile-admin', lockId, { role: 'ADMIN' });
    expect((await t.app.inject({ method: 'PUT', url: `/api/device/${lockId}/tile/${tileId}`, headers: bearer(admin.token) })).statusCode).toBe(204);
    const signIn = async () => {
      expect((await t.app.inject({ method: 'POST', url: `/api/tile/${tileId}/sign-in`, payload: { email: 'tile-guest@example.com' } })).statusCode).toBe(202);
      await settleAccountMail(t.app);
      return (await t.database.db.select().from(tileSignInTokens).where(eq(tileSignInTokens.applicationUserId, guest.id))).length;
    };
    expect(await signIn()).toBe(1);
    for (let i = 1; i < UNVERIFIED_EMAIL_LIMIT.max; i++) expect((await invite(admin.token, uniqueEmail('friend'))).statusCode).toBe(200);
    expect(await signIn()).toBe(1);
  });
});

describe('inviting someone new through the SDKs (POST /share/invite/{email})', () => {
  it('takes an admin holding a share in force: a user with no share, a USER, an ended or not yet begun ADMIN share get a 403 and nobody is made; known people are still found', async () => {
    const sandbox = await createSandbox(t);
    const lockId = await createLock(t, sandbox.applicationId);
    const now = Date.now();
    const callers = [
      await person(sandbox, 'no-share', lockId),
      await person(sandbox, 'plain-user', lockId, { role: 'USER' }),
      await person(sandbox, 'ended-admin', lockId, { role: 'ADMIN', endsAt: new Date(now - 60_000) }),
      await person(sandbox, 'future-admin', lockId, { role: 'ADMIN', startsAt: new Date(now + 3_600_000) }),
    ];
    const known = await person(sandbox, 'known-friend', lockId, { role: 'USER' });
    for (const caller of callers) {
      const victim = uniqueEmail('victim');
      const res = await invite(caller.token, victim);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toEqual({ code: 403, message: emailLimitErrors.inviteNeedsAdmin });
      expect(await made(victim)).toBe(0);
      // Someone the application knows is still found: that sends nothing.
      expect((await invite(caller.token, 'known-friend@example.com')).json().id).toBe(known.id);
    }
    expect(await sentFor(sandbox.applicationId)).toBe(0);
    const admin = await person(sandbox, 'real-admin', lockId, { role: 'ADMIN' });
    expect((await invite(admin.token, uniqueEmail('friend'))).statusCode).toBe(200);
    expect(await sentFor(sandbox.applicationId)).toBe(1);
  });
});

describe('an application’s hourly limit of invitations and key emails (verified owners)', () => {
  it(`counts the SDKs’ invitations and the owners’ shares by email together: past ${APPLICATION_EMAIL_LIMIT.max} an hour a clear 429, and nothing is made or sent`, async () => {
    const sandbox = await createSandbox(t);
    const lockId = await createLock(t, sandbox.applicationId);
    const admin = await person(sandbox, 'busy-admin', lockId, { role: 'ADMIN' });
    const shareByEmail = (email: string) =>
      t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/user`, headers: bearer(sandbox.owner.token), payload: { email } });
    for (let i = 0; i < APPLICATION_EMAIL_LIMIT.max; i++) {
      const res = i % 2 === 0 ? await invite(admin.token, uniqueEmail('many')) : await shareByEmail(uniqueEmail('many'));
      expect(res.statusCode, res.body).toBeLessThan(300);
    }
    const victim = uniqueEmail('one-too-many');
    for (const refused of [await invite(admin.token, victim), await shareByEmail(victim)]) {
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ code: 429, message: emailLimitErrors.applicationHourly });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await made(victim)).toBe(0);
    expect(await sentFor(sandbox.applicationId)).toBe(APPLICATION_EMAIL_LIMIT.max);
    // Another application is not held back by this one.
    const other = await createSandbox(t);
    const otherLock = await createLock(t, other.applicationId);
    const otherAdmin = await person(other, 'other-admin', otherLock, { role: 'ADMIN' });
    expect((await invite(otherAdmin.token, victim)).statusCode).toBe(200);
  });
});

describe('invitations to the portal (POST /account/invite)', () => {
  it(`a verified account sends ${ACCOUNT_INVITATION_LIMIT.max} an hour, then a clear 429 and no invitation is made`, async () => {
    const sandbox = await createSandbox(t);
    const send = (email: string) => t.app.inject({ method: 'POST', url: '/api/account/invite', headers: bearer(sandbox.owner.token), payload: { email } });
    for (let i = 0; i < ACCOUNT_INVITATION_LIMIT.max; i++) expect((await send(uniqueEmail('invitee'))).statusCode).toBe(204);
    const last = uniqueEmail('invitee');
    const refused = await send(last);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: 429, message: emailLimitErrors.accountInvitations });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await t.database.db.select().from(users).where(eq(users.email, last))).toEqual([]);
  });
});
