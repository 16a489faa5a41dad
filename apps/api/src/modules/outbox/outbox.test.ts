import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { LockTile, SentEmail } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { applicationOwners, sentEmails, users } from '../../db/schema.js';
import type { Mailer, MailMessage } from '../../plugins/mailer/index.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { sendAccountEmail, settleAccountMail } from '../account/account-trust.service.js';

/**
 * Without SMTP every email goes to a file in the data directory. The Outbox shows a signed-in account its
 * own account emails (the verification link, a key's or a passkey's code) and an application's owners its
 * tiles' sign-in emails; each reader only what is theirs, and nothing of the kind once SMTP delivers mail.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const outbox = async (appId: string, token: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/outbox`, headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return res.json() as SentEmail[];
};
const html = (appId: string, token: string, emailId: string) =>
  t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/outbox/${emailId}`, headers: bearer(token) });

/** A registered account (registration mails its verification link) that owns an application. */
async function registeredOwner() {
  const email = uniqueEmail('outbox');
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'first-pass', displayName: 'Owner' } });
  expect(res.statusCode).toBe(200);
  await settleAccountMail(t.app);
  const [user] = await t.database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  const appId = await createApplication(t, user!.id);
  return { email, userId: user!.id, token: res.json().authToken as string, appId };
}

describe('an account’s own emails in the Outbox (no SMTP)', () => {
  it('lists the verification link and a key’s code to their account, in each application it owns, with the HTML as sent', async () => {
    const me = await registeredOwner();
    await sendAccountEmail(t.app, me.email, { kind: 'keyCode', code: '482913', minutes: 10 }, 'en');
    const listed = await outbox(me.appId, me.token);
    expect(listed.map((m) => m.kind)).toEqual(['account-key-code', 'account-verify-email']);
    expect(listed[0]).toMatchObject({ to: me.email });
    expect(listed[0]!.text).toContain('482913');
    expect(listed[1]!.text).toContain('/verify-email');
    const page = await html(me.appId, me.token, listed[0]!.id);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('482913');
    // Another application of the same account shows them too.
    const second = await createApplication(t, me.userId, 'Second App');
    expect((await outbox(second, me.token)).map((m) => m.id)).toEqual(listed.map((m) => m.id));
  });

  it('shows them to no one else: not another account, not a co-owner of the same application', async () => {
    const me = await registeredOwner();
    const [mine] = await outbox(me.appId, me.token);
    expect(mine?.kind).toBe('account-verify-email');
    const stranger = await createOwner(t);
    const strangersApp = await createApplication(t, stranger.userId);
    expect((await outbox(strangersApp, stranger.token)).some((m) => m.id === mine!.id)).toBe(false);
    expect((await html(strangersApp, stranger.token, mine!.id)).statusCode).toBe(404);
    // A co-owner reads the application's Outbox, but not the other owner's account emails in it.
    const coOwner = await createOwner(t);
    await t.database.db.insert(applicationOwners).values({ applicationId: me.appId, userId: coOwner.userId });
    expect((await outbox(me.appId, coOwner.token)).some((m) => m.id === mine!.id)).toBe(false);
    const coOwnersCopy = await html(me.appId, coOwner.token, mine!.id);
    expect(coOwnersCopy.statusCode).toBe(404);
    expect(coOwnersCopy.body).not.toContain('/verify-email');
  });

  it('never keeps a password reset link: it is asked for signed out, and a session must not become a new password', async () => {
    const me = await registeredOwner();
    expect((await t.app.inject({ method: 'POST', url: '/api/account/password/reset/initialize', payload: { email: me.email } })).statusCode).toBe(204);
    await settleAccountMail(t.app);
    const kept = await t.database.db.select({ kind: sentEmails.kind }).from(sentEmails).where(eq(sentEmails.userId, me.userId));
    expect(kept.map((k) => k.kind)).toEqual(['account-verify-email']);
  });
});

describe('GET /config', () => {
  it('tells the portal how email is delivered, so a code dialog can say where the email is', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/config' })).json()).toMatchObject({ emailDelivery: 'outbox' });
  });
});

describe('with SMTP', () => {
  it('keeps none of an account’s emails nor a tile’s sign-in link: the inbox is the proof they ask for', async () => {
    const owner = await createOwner(t);
    const appId = await createApplication(t, owner.userId);
    const lockId = await createLock(t, appId, { name: 'Gate' });
    const tile = (await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/lock/${lockId}/tile`, headers: bearer(owner.token) })).json() as LockTile;
    const guest = uniqueEmail('guest');
    expect((await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/lock/${lockId}/user`, headers: bearer(owner.token), payload: { email: guest, role: 'USER' } })).statusCode).toBe(201);

    const fileMailer = t.app.mailer;
    const sent: MailMessage[] = [];
    const smtp: Mailer = { driver: 'smtp', send: async (m) => (sent.push(m), { id: String(sent.length) }), close: async () => {} };
    t.app.mailer = smtp;
    try {
      await sendAccountEmail(t.app, owner.email, { kind: 'passkeyCode', code: '551200', minutes: 10 }, 'en');
      expect((await t.app.inject({ method: 'POST', url: `/api/tile/${tile.tileId}/sign-in`, payload: { email: guest } })).statusCode).toBe(202);
      await settleAccountMail(t.app);
    } finally {
      t.app.mailer = fileMailer;
    }
    expect(sent.map((m) => m.to)).toEqual([owner.email, guest]);
    expect((await outbox(appId, owner.token)).map((m) => m.kind)).toEqual(['lock-invitation']);
  });
});

describe('a tile’s sign-in email (no SMTP)', () => {
  it('is in the application’s Outbox for its owners', async () => {
    const owner = await createOwner(t);
    const appId = await createApplication(t, owner.userId);
    const lockId = await createLock(t, appId, { name: 'Gate' });
    const tile = (await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/lock/${lockId}/tile`, headers: bearer(owner.token) })).json() as LockTile;
    const guest = uniqueEmail('guest');
    await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/lock/${lockId}/user`, headers: bearer(owner.token), payload: { email: guest, role: 'USER' } });
    expect((await t.app.inject({ method: 'POST', url: `/api/tile/${tile.tileId}/sign-in`, payload: { email: guest } })).statusCode).toBe(202);
    await settleAccountMail(t.app);
    const [newest] = await outbox(appId, owner.token);
    expect(newest).toMatchObject({ kind: 'tile-sign-in', to: guest.toLowerCase() });
    expect(newest!.text).toContain(`/t/${tile.tileId}`);
  });
});
