import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountErrors, apiErrors, messages, UNVERIFIED_EMAIL_LIMIT } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { accountTokens, applicationUsers, users } from '../../db/schema.js';
import { settleAccountMail } from './account-trust.service.js';

/** Forgot password, email verification and the unverified account's daily emails. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const post = (url: string, payload?: object, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url: `/api${url}`, payload, headers });

interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}
async function mailsTo(to: string): Promise<Mail[]> {
  await settleAccountMail(t.app);
  const dir = path.join(t.dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Mail)
    .filter((m) => m.to === to);
}
/** The newest emailed link to `pathname`: its secrets are in the fragment, which a browser never sends. */
const lastLink = async (to: string, pathname: string) => {
  const pattern = new RegExp(`http://localhost:3000${pathname}#[^\\s)]+`);
  const match = (await mailsTo(to)).map((m) => m.text.match(pattern)).filter(Boolean).at(-1);
  if (!match) return null;
  const url = new URL(match[0]);
  expect(url.search).toBe('');
  return { searchParams: new URLSearchParams(url.hash.slice(1)) };
};

async function registered(password = 'first-pass') {
  const email = uniqueEmail('trust');
  const res = await post('/auth/register', { email, password, displayName: 'Trusty' });
  expect(res.statusCode).toBe(200);
  return { email, password, token: res.json().authToken as string, refresh: res.json().refreshToken as string };
}

describe('forgot password', () => {
  it('answers an unknown and a known address the same, and mails only the account a single-use link', async () => {
    const { email } = await registered();
    const unknown = uniqueEmail('nobody');
    const a = await post('/account/password/reset/initialize', { email: unknown });
    const b = await post('/account/password/reset/initialize', { email: email.toUpperCase() });
    expect([a.statusCode, a.body]).toEqual([204, '']);
    expect([b.statusCode, b.body]).toEqual([204, '']);
    expect(await mailsTo(unknown)).toHaveLength(0);
    const link = await lastLink(email, '/reset-password');
    expect(link).not.toBeNull();
    const mail = (await mailsTo(email)).at(-1)!;
    expect(mail.subject).toBe('Reset your Latchkey password');
    expect(mail.html).toContain('Choose a new password');
    // Stored hashed: the link's secret is nowhere in the database.
    const rows = await t.database.db.select().from(accountTokens).where(eq(accountTokens.userId, link!.searchParams.get('userId')!));
    expect(rows.some((r) => r.tokenHash === link!.searchParams.get('token'))).toBe(false);
  });

  it('sets the new password, ends every session, signs in; the link then says it was used', async () => {
    const { email, token, refresh } = await registered();
    await post('/account/password/reset/initialize', { email });
    const link = (await lastLink(email, '/reset-password'))!;
    const body = { userId: link.searchParams.get('userId'), token: link.searchParams.get('token'), password: 'brand-new' };

    // A password breaking the spec's rule changes nothing and leaves the link usable.
    const short = await post('/account/password/reset/verify', { ...body, password: 'abc' });
    expect(short.statusCode).toBe(400);
    expect(short.json().errors[0].message).toBe(messages.passwordTooShort);

    const res = await post('/account/password/reset/verify', body);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(expect.arrayContaining(['authToken', 'refreshToken']));
    expect((await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(refresh) })).statusCode).toBe(401);
    const account = await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(res.json().authToken) });
    expect(account.json()).toMatchObject({ email, emailVerified: true });
    expect((await post('/auth/token', { email, password: 'first-pass' })).statusCode).toBe(401);
    expect((await post('/auth/token', { email, password: 'brand-new' })).statusCode).toBe(200);

    const again = await post('/account/password/reset/verify', { ...body, password: 'third-pass' });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ code: 400, message: accountErrors.resetLinkUsed });
    expect((await post('/auth/token', { email, password: 'third-pass' })).statusCode).toBe(401);
  });

  it('refuses an expired link, a wrong token and another account’s id with a 400, changing nothing', async () => {
    const { email, password } = await registered();
    await post('/account/password/reset/initialize', { email });
    const link = (await lastLink(email, '/reset-password'))!;
    const userId = link.searchParams.get('userId')!;
    const token = link.searchParams.get('token')!;
    const other = await registered();
    const otherId = (await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(other.token) })).json().userId;
    for (const [body, message] of [
      [{ userId, token: `${token.slice(0, -2)}AA`, password: 'x-new-pass' }, accountErrors.resetLinkInvalid],
      [{ userId: otherId, token, password: 'x-new-pass' }, accountErrors.resetLinkInvalid],
      [{ userId: randomUUID(), token, password: 'x-new-pass' }, accountErrors.resetLinkInvalid],
    ] as const) {
      const res = await post('/account/password/reset/verify', body);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(message);
    }
    await t.database.db.update(accountTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(accountTokens.userId, userId));
    const expired = await post('/account/password/reset/verify', { userId, token, password: 'x-new-pass' });
    expect(expired.json()).toEqual({ code: 400, message: accountErrors.resetLinkExpired });
    expect((await post('/auth/token', { email, password })).statusCode).toBe(200);
    expect((await post('/auth/token', { email: other.email, password: other.password })).statusCode).toBe(200);
  });

  it('is limited per email (3 an hour) with the same answer for unknown addresses; German mail for German readers', async () => {
    const { email } = await registered();
    const unknown = uniqueEmail('nobody');
    for (const address of [email, unknown]) {
      for (let i = 0; i < 3; i++) expect((await post('/account/password/reset/initialize', { email: address }, { 'accept-language': 'de-DE' })).statusCode).toBe(204);
      const limited = await post('/account/password/reset/initialize', { email: address });
      expect(limited.statusCode).toBe(429);
      expect(limited.json().message).toBe(apiErrors.tooManyAttempts);
    }
    const mails = (await mailsTo(email)).filter((m) => m.text.includes('/reset-password'));
    expect(mails).toHaveLength(3);
    expect(mails[0]!.subject).toBe('Ihr Latchkey-Passwort zurücksetzen');
    expect(mails[0]!.text).toContain('Neues Passwort wählen');
  });

  it('is limited per address across emails', async () => {
    const limited = await createTestApp({ ANONYMOUS_RATE_LIMIT_MAX: '100000' });
    try {
      let last = 0;
      for (let i = 0; i < 21; i++) last = (await limited.app.inject({ method: 'POST', url: '/api/account/password/reset/initialize', payload: { email: uniqueEmail('spray') } })).statusCode;
      expect(last).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('email verification', () => {
  it('registration mails a link; PUT /account/email/verify?code proves the address once; GET /account reports it', async () => {
    const { email, token } = await registered();
    const account = () => t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) });
    expect((await account()).json().emailVerified).toBe(false);
    const link = (await lastLink(email, '/verify-email'))!;
    expect((await mailsTo(email)).at(-1)!.subject).toBe('Verify your email address for Latchkey');
    const code = link.searchParams.get('code')!;
    const verify = (c: string) => t.app.inject({ method: 'PUT', url: `/api/account/email/verify?code=${encodeURIComponent(c)}` });
    expect((await verify('not-the-code')).json()).toEqual({ code: 400, message: accountErrors.verifyLinkInvalid });
    expect((await account()).json().emailVerified).toBe(false);
    expect((await verify(code)).statusCode).toBe(204);
    expect((await account()).json().emailVerified).toBe(true);
    expect((await verify(code)).statusCode).toBe(400);
    // Verified: "send again" sends nothing.
    const before = (await mailsTo(email)).length;
    expect((await post('/account/email/reverify', undefined, bearer(token))).statusCode).toBe(204);
    expect(await mailsTo(email)).toHaveLength(before);
  });

  it('takes the code in the body `{code}` as well as in the query; with neither, a 400 that says what is missing', async () => {
    const { email, token } = await registered();
    const code = (await lastLink(email, '/verify-email'))!.searchParams.get('code')!;
    const put = (payload?: object, query = '') =>
      t.app.inject({ method: 'PUT', url: `/api/account/email/verify${query}`, ...(payload ? { payload } : {}) });
    expect((await put()).json()).toEqual({ code: 400, message: accountErrors.verifyCodeMissing });
    expect((await put({})).json()).toEqual({ code: 400, message: accountErrors.verifyCodeMissing });
    expect((await put({ code: 'not-the-code' })).json()).toEqual({ code: 400, message: accountErrors.verifyLinkInvalid });
    expect((await put({ code: 'not a code!' })).statusCode).toBe(400);
    expect((await put({ code })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) })).json().emailVerified).toBe(true);
    expect((await put({ code })).json()).toEqual({ code: 400, message: accountErrors.verifyLinkInvalid });
  });

  it('reverify sends a new link and the older one stops working; expired links are refused', async () => {
    const { email, token } = await registered();
    const first = (await lastLink(email, '/verify-email'))!.searchParams.get('code')!;
    expect((await post('/account/email/reverify', undefined, { ...bearer(token), 'accept-language': 'de' })).statusCode).toBe(204);
    const mails = await mailsTo(email);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse für Latchkey');
    const second = (await lastLink(email, '/verify-email'))!.searchParams.get('code')!;
    expect((await t.app.inject({ method: 'PUT', url: `/api/account/email/verify?code=${first}` })).statusCode).toBe(400);
    const [user] = await t.database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
    await t.database.db.update(accountTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(accountTokens.userId, user!.id));
    expect((await t.app.inject({ method: 'PUT', url: `/api/account/email/verify?code=${second}` })).statusCode).toBe(400);
    expect((await post('/account/email/reverify')).statusCode).toBe(401);
  });

  it('an unverified account makes the platform send 5 emails a day, then a clear 429 and nothing sent; verified, no such limit', async () => {
    const { email, token } = await registered();
    const invite = () => post('/account/invite', { email: uniqueEmail('invitee') }, bearer(token));
    for (let i = 0; i < UNVERIFIED_EMAIL_LIMIT.max; i++) expect((await invite()).statusCode).toBe(204);
    const invitee = uniqueEmail('sixth');
    const refused = await post('/account/invite', { email: invitee }, bearer(token));
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: 429, message: accountErrors.unverifiedSendLimit });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3600);
    expect(await t.database.db.select().from(users).where(eq(users.email, invitee))).toHaveLength(0);
    const code = (await lastLink(email, '/verify-email'))!.searchParams.get('code')!;
    await t.app.inject({ method: 'PUT', url: `/api/account/email/verify?code=${code}` });
    expect((await post('/account/invite', { email: invitee }, bearer(token))).statusCode).toBe(204);
  });
});

describe('the unverified account’s 5 emails a day: shares by email and test emails too', () => {
  /** An application of the account's own, and the lock it starts with. */
  async function applicationOf(token: string) {
    const created = await post('/platform/application', { name: 'Trust Application', companyName: 'Trust Co', mailingAddress: '1 Trust Road' }, bearer(token));
    expect(created.statusCode, created.body).toBe(201);
    const appId = created.headers.location!.toString().split('/').pop()!;
    const locks = await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/lock`, headers: bearer(token) });
    return { appId, lockId: (locks.json() as { id: string }[])[0]!.id };
  }
  const shareByEmail = (token: string, app: { appId: string; lockId: string }, email: string) =>
    post(`/platform/application/${app.appId}/lock/${app.lockId}/user`, { email }, bearer(token));
  const testEmail = (token: string, appId: string) => post(`/platform/application/${appId}/email/test`, { emailPreferences: {} }, bearer(token));

  it('register, then share at once keeps working: an API client’s first share by email goes out, unverified', async () => {
    const { token } = await registered();
    const app = await applicationOf(token);
    const friend = uniqueEmail('friend');
    const shared = await shareByEmail(token, app, friend);
    expect(shared.statusCode, shared.body).toBe(201);
    expect(await mailsTo(friend)).toHaveLength(1);
  });

  it('each share by email is charged: the sixth is a clear 429 and nothing is shared or sent; a share by user id is charged only when it sends an email', async () => {
    const { email, token } = await registered();
    const app = await applicationOf(token);
    for (let i = 0; i < UNVERIFIED_EMAIL_LIMIT.max; i++) expect((await shareByEmail(token, app, uniqueEmail('shared'))).statusCode).toBe(201);
    const sixth = uniqueEmail('sixth-share');
    const refused = await shareByEmail(token, app, sixth);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: 429, message: accountErrors.unverifiedSendLimit });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3600);
    expect(await t.database.db.select().from(users).where(eq(users.email, sixth))).toHaveLength(0);
    expect(await mailsTo(sixth)).toHaveLength(0);
    // A share by user id that sends an email (here: a pending user's invitation, sent again) is charged too:
    // refused, and the share is not changed.
    const listShares = async () =>
      (await t.app.inject({ method: 'GET', url: `/api/platform/application/${app.appId}/lock/${app.lockId}/user`, headers: bearer(token) })).json() as { userId: string; role: string }[];
    const pending = (await listShares())[0]!;
    const renewed = await post(`/platform/application/${app.appId}/lock/${app.lockId}/user`, { userId: pending.userId, role: 'ADMIN' }, bearer(token));
    expect(renewed.statusCode).toBe(429);
    expect(renewed.json()).toEqual({ code: 429, message: accountErrors.unverifiedSendLimit });
    expect((await listShares()).find((s) => s.userId === pending.userId)!.role).toBe(pending.role);
    // One that sends none (a user the application knows without an address) is not charged.
    const [quiet] = await t.database.db.insert(applicationUsers).values({ applicationId: app.appId, sub: 'no-address', status: 'active' }).returning({ id: applicationUsers.id });
    const byId = await post(`/platform/application/${app.appId}/lock/${app.lockId}/user`, { userId: quiet!.id, role: 'ADMIN' }, bearer(token));
    expect(byId.statusCode, byId.body).toBe(201);
    // Verified, no such limit.
    const code = (await lastLink(email, '/verify-email'))!.searchParams.get('code')!;
    await t.app.inject({ method: 'PUT', url: `/api/account/email/verify?code=${code}` });
    expect((await shareByEmail(token, app, sixth)).statusCode).toBe(201);
  });

  it('test emails are charged against the same allowance as invitations: past it a clear 429, and no test email is sent', async () => {
    const { email, token } = await registered();
    const { appId } = await applicationOf(token);
    // Three invitations and two test emails: the day's five (the test email's own limit, 5 in 10 minutes, is not reached).
    for (let i = 0; i < 3; i++) expect((await post('/account/invite', { email: uniqueEmail('invitee') }, bearer(token))).statusCode).toBe(204);
    for (let i = 0; i < 2; i++) {
      const sent = await testEmail(token, appId);
      expect(sent.statusCode, sent.body).toBe(200);
    }
    const before = (await mailsTo(email)).length;
    const refused = await testEmail(token, appId);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: 429, message: accountErrors.unverifiedSendLimit });
    expect(await mailsTo(email)).toHaveLength(before);
    // And a test email spends the allowance an invitation then lacks.
    expect((await post('/account/invite', { email: uniqueEmail('invitee') }, bearer(token))).json()).toEqual({ code: 429, message: accountErrors.unverifiedSendLimit });
  });
});
