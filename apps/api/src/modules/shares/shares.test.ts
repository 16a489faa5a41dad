import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { lockErrors, lockMessages, messages, uiErrors, type Lock, type LockLogPage, type LockShare, type SentEmail } from '@latchkey/contract';
import { applications, lockShares, sentEmails } from '../../db/schema.js';
import { type OutboxMailer } from '../../plugins/mailer/index.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { addIssuer, addKey, bearer, createApplication, createOwner, signUserToken, type SigningKey } from '../../../test/fixtures/platform-users.js';
import { invitationRefusal } from './shares.service.js';

/**
 * Sharing a lock — to users and to new emails (branded invitations), revoking, logging, ownership. Each test
 * shares to addresses of its own, and one that reads a lock's whole share list or log uses a lock of its own:
 * the tests pass in any order.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let lock: Lock;
let key: SigningKey;
const ISS = 'https://id.shares-test.example';

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId, 'Acme Access');
  await t.app.db
    .update(applications)
    .set({ primaryColour: '#AA2200', logoUrl: 'https://cdn.example.com/acme.png', appLink: 'https://acme.example/app', companyName: 'Acme Ltd' })
    .where(eq(applications.id, appId));
  await addIssuer(t, appId, ISS);
  key = await addKey(t, appId, 'ES256');
  lock = (await call('POST', `/api/platform/application/${appId}/lock`, { name: 'Main Entrance' })).json() as Lock;
});
afterAll(() => t?.close());

type Method = 'GET' | 'POST' | 'DELETE';
function call(method: Method, url: string, payload?: object, token = owner.token) {
  return t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
}
const sharesUrl = (lockId = lock.id) => `/api/platform/application/${appId}/lock/${lockId}/user`;
const share = (payload: object, token = owner.token, lockId = lock.id) => call('POST', sharesUrl(lockId), payload, token);
const shares = async (lockId = lock.id) => (await call('GET', sharesUrl(lockId))).json() as LockShare[];
const log = async (lockId = lock.id) => ((await call('GET', `/api/platform/application/${appId}/lock/${lockId}/log`)).json() as LockLogPage).items;
const newLock = async (name: string) => ((await call('POST', `/api/platform/application/${appId}/lock`, { name })).json() as Lock).id;
const mailsTo = async (to: string) => (await outbox()).filter((m) => m.to === to);
const outbox = async () => (await call('GET', `/api/platform/application/${appId}/outbox`)).json() as SentEmail[];
const signIn = async (sub: string, email: string) => {
  const res = await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(await signUserToken(key, { iss: ISS, sub, email })) });
  expect(res.statusCode).toBe(200);
};
const userIdOf = async (email: string) => (await shares()).find((s) => s.email === email)!.userId;

describe('sharing with someone who has no account yet', () => {
  const invitation = { role: 'ADMIN', start: 1_900_000_000, timeWindow: { start: '08:00', end: '17:00', timezone: 'Europe/Paris', days: ['MONDAY'] } };

  it('creates a pending user and a share with an expiring invitation, and logs it', async () => {
    const own = await newLock('Side Entrance');
    const before = Date.now() / 1000;
    const res = await share({ email: 'New.Person@Example.com', ...invitation }, owner.token, own);
    expect(res.statusCode).toBe(201);
    const body = res.json() as LockShare;
    expect(body).toMatchObject({ email: 'new.person@example.com', status: 'pending', role: 'ADMIN', start: 1_900_000_000, end: null, timeWindow: { timezone: 'Europe/Paris' } });
    expect(body.inviteExpiresAt! - before).toBeGreaterThan(t.app.config.inviteTtl - 60);
    expect(await shares(own)).toEqual([body]);
    expect((await log(own))[0]).toMatchObject({ type: 'SHARE', subject: 'new.person@example.com', reason: 'ADMIN', rejected: false, actor: { userId: owner.userId, email: owner.email } });
  });

  it("sends a branded invitation with a text part through the mailer, and keeps it in the application's Outbox", async () => {
    expect((await share({ email: 'Branded.Person@Example.com', ...invitation })).statusCode).toBe(201);
    const [listed] = await mailsTo('branded.person@example.com');
    expect(listed).toMatchObject({ kind: 'lock-invitation', to: 'branded.person@example.com', subject: 'You have a new key for Acme Access' });
    expect(listed!.text).toContain('You have been given access to the door “Main Entrance”.');
    expect(listed!.text).toContain('Accept Key: https://acme.example/app');
    expect(listed!.text).toMatch(/This invitation expires on .+ UTC\. If you need it after that, ask the person who shared it with you to share the door again\./);
    expect(listed!.text).toContain('Acme Ltd');

    const html = await call('GET', `/api/platform/application/${appId}/outbox/${listed!.id}`);
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toContain('text/html');
    expect(html.headers['content-security-policy']).toContain("default-src 'none'");
    for (const part of ['#AA2200', 'https://cdn.example.com/acme.png', 'Main Entrance', 'Acme Ltd', 'https://acme.example/app']) expect(html.body).toContain(part);

    // The mailer (the file outbox here) got the same email, both parts.
    const mailed = (await (t.app.mailer as OutboxMailer).list()).filter((m) => m.to === 'branded.person@example.com');
    expect(mailed).toHaveLength(1);
    expect(mailed[0]).toMatchObject({ subject: listed!.subject, text: listed!.text });
    const [stored] = await t.app.db.select().from(sentEmails).where(eq(sentEmails.id, listed!.id));
    expect(mailed[0]!.html).toBe(stored!.html);
  });

  it('writes the email in the sharer’s language (the portal’s Accept-Language)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: sharesUrl(),
      headers: { ...bearer(owner.token), 'accept-language': 'de-DE,de;q=0.9' },
      payload: { email: 'neue.person@example.com', role: 'USER' },
    });
    expect(res.statusCode).toBe(201);
    const german = (await outbox()).find((m) => m.to === 'neue.person@example.com')!;
    expect(german.subject).toBe('Sie haben einen neuen Schlüssel für Acme Access');
    expect(german.text).toContain('Sie haben Zugang zur Tür „Main Entrance“ erhalten.');
  });

  it('renews the invitation and sends it again when shared again (200)', async () => {
    expect((await share({ email: 'renewed.person@example.com', ...invitation })).statusCode).toBe(201);
    const userId = await userIdOf('renewed.person@example.com');
    await t.app.db.update(lockShares).set({ inviteExpiresAt: new Date(Date.now() - 1000) }).where(eq(lockShares.userId, userId));
    const res = await share({ email: 'renewed.person@example.com', role: 'USER' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId, role: 'USER', start: null, timeWindow: null });
    expect((res.json() as LockShare).inviteExpiresAt!).toBeGreaterThan(Date.now() / 1000);
    expect(await mailsTo('renewed.person@example.com')).toHaveLength(2);
  });

  it('becomes a plain share when the invitee signs in before it expires', async () => {
    expect((await share({ email: 'signing.person@example.com', ...invitation })).statusCode).toBe(201);
    expect((await shares()).find((s) => s.email === 'signing.person@example.com')).toMatchObject({ status: 'pending' });
    await signIn('sub-signing-person', 'signing.person@example.com');
    const active = (await shares()).find((s) => s.email === 'signing.person@example.com');
    expect(active).toMatchObject({ email: 'signing.person@example.com', status: 'active', inviteExpiresAt: null });
  });

  it('stays refused with the activation-link-expired message when the invitee comes too late', async () => {
    await share({ email: 'late@example.com' });
    const userId = await userIdOf('late@example.com');
    await t.app.db.update(lockShares).set({ inviteExpiresAt: new Date(Date.now() - 1000) }).where(eq(lockShares.userId, userId));
    await signIn('sub-late', 'late@example.com');
    const [row] = await t.app.db.select().from(lockShares).where(eq(lockShares.userId, userId));
    expect(row!.inviteExpiresAt).not.toBeNull();
    expect(invitationRefusal(row!)).toBe(uiErrors.activationLinkExpired);
    // Resharing to the now active user makes it a plain share.
    expect((await share({ userId })).statusCode).toBe(200);
    const [renewed] = await t.app.db.select().from(lockShares).where(eq(lockShares.userId, userId));
    expect(invitationRefusal(renewed!)).toBeNull();
    expect(invitationRefusal({ inviteExpiresAt: new Date(Date.now() + 60_000) })).toBeNull();
  });

  it('follows an existing user whose token later carries the invited email', async () => {
    await signIn('sub-mover', 'old.address@example.com');
    await share({ email: 'new.address@example.com' });
    await signIn('sub-mover', 'new.address@example.com');
    const moved = (await shares()).filter((s) => s.email === 'new.address@example.com');
    expect(moved).toHaveLength(1);
    expect(moved[0]).toMatchObject({ status: 'active', inviteExpiresAt: null });
  });
});

describe('sharing with users the application already has', () => {
  it('shares by user id or by email (any case) to the active user, with no invitation', async () => {
    await signIn('sub-known', 'known@example.com');
    const sent = (await outbox()).length;
    const byEmail = await share({ email: 'KNOWN@example.com', end: 2_000_000_000 });
    expect(byEmail.statusCode).toBe(201);
    expect(byEmail.json()).toMatchObject({ email: 'known@example.com', status: 'active', inviteExpiresAt: null, end: 2_000_000_000 });
    const byId = await share({ userId: (byEmail.json() as LockShare).userId, role: 'ADMIN' });
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toMatchObject({ role: 'ADMIN', end: null });
    // The application sends only essential emails (the default): a share notice is not one.
    expect(await outbox()).toHaveLength(sent);
  });

  it('sends a share notice when the application sends more than essential emails', async () => {
    await t.app.db.update(applications).set({ onlySendEssentialEmails: false }).where(eq(applications.id, appId));
    await signIn('sub-notice', 'notice@example.com');
    await share({ email: 'notice@example.com' });
    expect(await mailsTo('notice@example.com')).toEqual([expect.objectContaining({ kind: 'lock-share', to: 'notice@example.com' })]);
    await t.app.db.update(applications).set({ onlySendEssentialEmails: true }).where(eq(applications.id, appId));
  });
});

describe('bad input changes nothing', () => {
  const rule = { start: '08:00', end: '17:00', timezone: 'Europe/Paris', days: ['MONDAY'] };
  it.each([
    [{}, lockMessages.emailOrUser],
    [{ role: 'USER' }, lockMessages.emailOrUser],
    [{ email: 'a@example.com', userId: crypto.randomUUID() }, lockMessages.emailOrUser],
    [{ email: 'not-an-email' }, messages.invalidEmail],
    [{ userId: 'nope' }, 'Not a valid user id'],
    [{ email: 'a@example.com', role: 'OWNER' }, undefined],
    [{ email: 'a@example.com', start: 200, end: 100 }, lockMessages.endBeforeStart],
    [{ email: 'a@example.com', start: -1 }, lockMessages.timeBoundNumber],
    [{ email: 'a@example.com', timeWindow: { ...rule, days: [] } }, lockMessages.minimumOneDay],
    [{ email: 'a@example.com', timeWindow: { ...rule, timezone: 'Nowhere/Land' } }, lockMessages.invalidTimeZone],
  ])('%j → 400', async (payload, message) => {
    const [before, beforeLog, beforeOutbox] = [await shares(), await log(), await outbox()];
    const res = await share(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, ...(message ? { message } : {}) });
    expect(await shares()).toEqual(before);
    expect(await log()).toEqual(beforeLog);
    expect(await outbox()).toEqual(beforeOutbox);
  });

  it("answers 404 for a user id of another application and changes nothing", async () => {
    const before = await shares();
    const res = await share({ userId: crypto.randomUUID() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ message: lockErrors.userNotFound });
    expect(await shares()).toEqual(before);
  });
});

describe('revoking', () => {
  it('removes the share at once and logs it; a second revoke is 404', async () => {
    await share({ email: 'revoked@example.com' });
    const userId = await userIdOf('revoked@example.com');
    const res = await call('DELETE', `${sharesUrl()}/${userId}`);
    expect(res.statusCode).toBe(204);
    expect((await shares()).map((s) => s.userId)).not.toContain(userId);
    expect((await log())[0]).toMatchObject({ type: 'REVOKE', subject: 'revoked@example.com', actor: { userId: owner.userId } });
    for (const id of [userId, crypto.randomUUID(), 'not-a-uuid']) {
      const again = await call('DELETE', `${sharesUrl()}/${id}`);
      expect(again.statusCode).toBe(404);
      expect(again.json()).toMatchObject({ message: lockErrors.shareNotFound });
    }
  });
});

describe('who may share', () => {
  it('answers a stranger 404 on every share and outbox route, and changes nothing', async () => {
    expect((await share({ email: 'kept.from.strangers@example.com' })).statusCode).toBe(201);
    const before = await shares();
    const [email] = await mailsTo('kept.from.strangers@example.com');
    const userId = await userIdOf('kept.from.strangers@example.com');
    for (const [method, url, payload] of [
      ['GET', sharesUrl(), undefined],
      ['POST', sharesUrl(), { email: 'intruder@example.com' }],
      ['POST', sharesUrl(), {}],
      ['DELETE', `${sharesUrl()}/${userId}`, undefined],
      ['GET', `/api/platform/application/${appId}/outbox`, undefined],
      ['GET', `/api/platform/application/${appId}/outbox/${email!.id}`, undefined],
    ] as const) {
      const res = await call(method, url, payload, stranger.token);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body).not.toContain(email!.subject);
    }
    expect(await shares()).toEqual(before);
  });

  it("answers 404 for another application's lock or email, an unknown lock and a malformed id", async () => {
    const otherApp = await createApplication(t, stranger.userId, 'Other');
    const foreign = (await call('POST', `/api/platform/application/${otherApp}/lock`, { name: 'Foreign' }, stranger.token)).json() as Lock;
    for (const id of [foreign.id, crypto.randomUUID(), 'x']) {
      for (const [method, payload] of [['GET', undefined], ['POST', { email: 'a@example.com' }]] as const) {
        const res = await call(method, sharesUrl(id), payload);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ message: lockErrors.lockNotFound });
      }
    }
    await call('POST', `/api/platform/application/${otherApp}/lock/${foreign.id}/user`, { email: 'theirs@example.com' }, stranger.token);
    const [theirs] = (await call('GET', `/api/platform/application/${otherApp}/outbox`, undefined, stranger.token)).json() as SentEmail[];
    for (const id of [theirs!.id, crypto.randomUUID(), 'x']) {
      const res = await call('GET', `/api/platform/application/${appId}/outbox/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ message: lockErrors.outboxEmailNotFound });
    }
  });
});
