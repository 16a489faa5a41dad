import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_V2_ACCEPT, apiErrors, messages } from '@latchkey/contract';
import { eq } from 'drizzle-orm';
import { users } from '../../db/schema.js';
import { createTestApp, eventually, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { createInvitation } from './invitations.service.js';
import { createApplication } from '../../../test/fixtures/platform-users.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
});
afterAll(() => t.close());

const register = (payload: object, query = '') => t.app.inject({ method: 'POST', url: `/api/auth/register${query}`, payload });
const login = (payload: object, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url: '/api/auth/token', payload, headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
const headerOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString());

describe('register', () => {
  it('creates an account and answers like login', async () => {
    const email = uniqueEmail('reg');
    const res = await register({ email, password: 'abcde', displayName: 'Reg' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['authToken', 'privateKey', 'publicKey', 'refreshToken']);
    expect(headerOf(body.authToken).alg).toBe('EdDSA');
    expect(claimsOf(body.authToken)).toMatchObject({ email, sub: expect.any(String), sid: expect.any(String), exp: expect.any(Number) });
    expect(Buffer.from(body.privateKey, 'base64').length).toBeGreaterThan(40);
  });

  it('validates with the contract messages', async () => {
    const bad = await register({ email: 'nope', password: 'abc' });
    expect(bad.statusCode).toBe(400);
    const messagesSeen = bad.json().errors.map((e: { message: string }) => e.message);
    expect(messagesSeen).toContain(messages.invalidEmail);
    expect(messagesSeen).toContain(messages.passwordTooShort);
    expect(bad.json()).toMatchObject({ code: 400, message: expect.any(String) });
  });

  it('refuses an existing account case-insensitively with 409', async () => {
    const email = uniqueEmail('dup');
    await register({ email, password: 'abcde' });
    const again = await register({ email: email.toUpperCase(), password: 'abcde' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ code: 409, message: apiErrors.accountExists });
  });

  it('stores argon2id at no less than OWASP minimum', async () => {
    const email = uniqueEmail('hash');
    await register({ email, password: 'abcde' });
    const [row] = await t.database.db.select().from(users).where(eq(users.email, email));
    const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(row!.passwordHash!);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(19456);
    expect(Number(m![2])).toBeGreaterThanOrEqual(2);
  });
});

describe('login', () => {
  const email = uniqueEmail('login');
  beforeAll(async () => {
    await register({ email, password: 'right-pass' });
  });

  it('accepts the v2 Accept header and any email case', async () => {
    const res = await login({ email: email.toUpperCase(), password: 'right-pass' }, { accept: API_V2_ACCEPT });
    expect(res.statusCode).toBe(200);
    expect(res.json().authToken).toEqual(expect.any(String));
  });

  it('answers 401 for a wrong password and an unknown email alike', async () => {
    for (const payload of [{ email, password: 'wrong-pass' }, { email: uniqueEmail('ghost'), password: 'whatever' }]) {
      const res = await login(payload);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 401, message: apiErrors.wrongCredentials });
    }
  });
});

describe('refresh and logout', () => {
  it('rotates refresh tokens and revokes the session when an old one is reused', async () => {
    const first = (await register({ email: uniqueEmail('rot'), password: 'abcde' })).json();
    const r1 = await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(first.refreshToken) });
    expect(r1.statusCode).toBe(200);
    const second = r1.json();
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(second.authToken) })).statusCode).toBe(200);

    const reuse = await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(first.refreshToken) });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().message).toBe(apiErrors.refreshReused);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(second.authToken) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(second.refreshToken) })).statusCode).toBe(401);
  });

  it('refuses an access token as a refresh token, and no token at all', async () => {
    const s = (await register({ email: uniqueEmail('acc'), password: 'abcde' })).json();
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(s.authToken) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh' })).statusCode).toBe(401);
  });

  it('destroy ends the session for the access and the refresh token', async () => {
    const s = (await register({ email: uniqueEmail('bye'), password: 'abcde' })).json();
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/token/destroy', headers: bearer(s.authToken) });
    expect(res.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(s.authToken) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(s.refreshToken) })).statusCode).toBe(401);
  });
});

describe('sign out everywhere', () => {
  it('ends every session of the user, on every instance, and leaves other users signed in', async () => {
    const email = uniqueEmail('everywhere');
    const first = (await register({ email, password: 'abcde' })).json();
    const second = (await login({ email, password: 'abcde' })).json();
    const other = (await register({ email: uniqueEmail('bystander'), password: 'abcde' })).json();
    const b = await t.secondInstance();
    try {
      // Both sessions are live, and instance B has them in its access cache.
      for (const app of [t.app, b.app]) {
        for (const s of [first, second]) expect((await app.inject({ url: '/api/account', headers: bearer(s.authToken) })).statusCode).toBe(200);
      }
      const res = await t.app.inject({ method: 'POST', url: '/api/auth/token/destroy/all', headers: bearer(second.authToken) });
      expect(res.statusCode).toBe(204);
      for (const s of [first, second]) {
        expect((await t.app.inject({ url: '/api/account', headers: bearer(s.authToken) })).statusCode).toBe(401);
        expect(await eventually(async () => (await b.app.inject({ url: '/api/account', headers: bearer(s.authToken) })).statusCode === 401)).toBe(true);
        expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(s.refreshToken) })).statusCode).toBe(401);
      }
      expect((await b.app.inject({ url: '/api/account', headers: bearer(other.authToken) })).statusCode).toBe(200);
      // Signing in again works, and needs a token: without one it is 401.
      expect((await login({ email, password: 'abcde' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/destroy/all' })).statusCode).toBe(401);
    } finally {
      await b.close();
    }
  });
});

describe('invitations', () => {
  it('code works once, requires a password change, then the new password works', async () => {
    const email = uniqueEmail('invite');
    await createInvitation(t.app, { email, inviterName: 'Owner' });
    const outbox = path.join(t.dataDir, 'outbox');
    const mail = fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8')).find((m) => m.includes(encodeURIComponent(email)));
    expect(mail).toBeDefined();
    const code = decodeURIComponent(/code=([A-Za-z0-9_%-]+)/.exec(mail!)![1]!);

    // A stranger learns nothing of the invitation: register and a wrong code answer as for an account / a bad password.
    expect((await register({ email, password: 'abcde' })).json()).toEqual({ code: 409, message: apiErrors.accountExists });
    expect((await login({ email, password: 'not-the-code' })).json()).toEqual({ code: 401, message: apiErrors.wrongCredentials });

    const first = await login({ email, password: code });
    expect(first.statusCode).toBe(200);
    expect(first.json().passwordChangeRequired).toBe(true);
    expect((await login({ email, password: code })).statusCode).toBe(401);

    const change = await t.app.inject({
      method: 'POST',
      url: '/api/account/password',
      headers: bearer(first.json().authToken),
      payload: { oldPassword: code, newPassword: 'chosen-pass' },
    });
    expect(change.statusCode).toBe(204);
    const after = await login({ email, password: 'chosen-pass' });
    expect(after.statusCode).toBe(200);
    expect(after.json().passwordChangeRequired).toBeUndefined();
  });

  it('register over a pending invitation, with or without force=true, takes nothing the invitation was given', async () => {
    // An owner invites an email and makes that pending account an owner of their application.
    const owner = (await register({ email: uniqueEmail('inviter'), password: 'abcde' })).json();
    const invitee = uniqueEmail('invitee');
    const asOwner = bearer(owner.authToken);
    const applicationId = await createApplication(t, claimsOf(owner.authToken).sub, 'Door App');
    expect((await t.app.inject({ method: 'POST', url: '/api/account/invite', headers: asOwner, payload: { email: invitee } })).statusCode).toBe(204);
    const pending = (await t.app.inject({ method: 'POST', url: '/api/directory/query', headers: asOwner, payload: { email: invitee } })).json();
    const added = await t.app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/owner`, headers: asOwner, payload: { userId: pending.id } });
    expect(added.statusCode).toBe(204);

    // A stranger registers that email without the code: refused exactly like an existing account, no token.
    for (const query of ['', '?force=true', '?force=false']) {
      const res = await register({ email: invitee.toUpperCase(), password: 'stranger-pass' }, query);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ code: 409, message: apiErrors.accountExists });
      expect(res.json().authToken).toBeUndefined();
    }
    // The stranger's password opens nothing, and the pending account kept its ownership and invitation.
    expect((await login({ email: invitee, password: 'stranger-pass' })).json()).toEqual({ code: 401, message: apiErrors.wrongCredentials });
    const [row] = await t.database.db.select().from(users).where(eq(users.email, invitee));
    expect(row!.passwordHash).toBeNull();
    expect(row!.inviteCodeHash).not.toBeNull();
    expect(row!.id).toBe(pending.id);

    // Only the invitation code claims it: the invitee signs in with the code and sees the application.
    const outbox = path.join(t.dataDir, 'outbox');
    const mail = fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8')).find((m) => m.includes(encodeURIComponent(invitee)));
    const code = decodeURIComponent(/code=([A-Za-z0-9_%-]+)/.exec(mail!)![1]!);
    const claimed = await login({ email: invitee, password: code });
    expect(claimed.statusCode).toBe(200);
    const apps = await t.app.inject({ url: '/api/platform/application', headers: bearer(claimed.json().authToken) });
    expect(JSON.stringify(apps.json())).toContain(applicationId);
  });

  it('POST /account/invite invites a colleague, 409 for an existing account', async () => {
    const me = (await register({ email: uniqueEmail('inviter'), password: 'abcde' })).json();
    const existing = uniqueEmail('existing');
    await register({ email: existing, password: 'abcde' });
    const ok = await t.app.inject({ method: 'POST', url: '/api/account/invite', headers: bearer(me.authToken), payload: { email: uniqueEmail('colleague') } });
    expect(ok.statusCode).toBe(204);
    const taken = await t.app.inject({ method: 'POST', url: '/api/account/invite', headers: bearer(me.authToken), payload: { email: existing } });
    expect(taken.statusCode).toBe(409);
  });

  it('writes the invitation in the inviter’s language (Accept-Language), English otherwise', async () => {
    const me = (await register({ email: uniqueEmail('inviter'), password: 'abcde', displayName: 'Ada' })).json();
    const mailTo = (email: string) => {
      const outbox = path.join(t.dataDir, 'outbox');
      const raw = fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8')).find((m) => m.includes(encodeURIComponent(email)));
      return JSON.parse(raw!) as { subject: string; text: string; html: string };
    };
    const german = uniqueEmail('kollege');
    const headers = { ...bearer(me.authToken), 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' };
    expect((await t.app.inject({ method: 'POST', url: '/api/account/invite', headers, payload: { email: german } })).statusCode).toBe(204);
    expect(mailTo(german).subject).toBe('Ihre Einladung zu Latchkey');
    expect(mailTo(german).text).toContain('Ada hat Sie zu Latchkey eingeladen.');

    const french = uniqueEmail('collegue');
    const fr = { ...bearer(me.authToken), 'accept-language': 'fr-FR' };
    expect((await t.app.inject({ method: 'POST', url: '/api/account/invite', headers: fr, payload: { email: french } })).statusCode).toBe(204);
    expect(mailTo(french).subject).toBe("You're invited to Latchkey");
  });
});

/**
 * One service with low limits for both tests: 3 attempts per address and email, 5 per address. Each test
 * signs in from addresses of its own, so neither counts the other's attempts.
 */
describe('rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ LOGIN_RATE_LIMIT_MAX: '3', LOGIN_ADDRESS_RATE_LIMIT_MAX: '5' });
  });
  afterAll(() => limited?.close());

  it('answers 429 with Retry-After beyond the limit', async () => {
    const email = uniqueEmail('brute');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await limited.app.inject({ method: 'POST', url: '/api/auth/token', remoteAddress: '192.0.2.33', payload: { email, password: 'guess-' + i } });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.json()).toEqual({ code: 429, message: apiErrors.tooManyAttempts });
  });

  it('limits one address across emails (spraying), without locking an email’s owner out from another address', async () => {
    const victim = uniqueEmail('victim');
    await limited.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: victim, password: 'right-pass' } });
    const attempt = (email: string, remoteAddress: string, password = 'Spring2026!') =>
      limited.app.inject({ method: 'POST', url: '/api/auth/token', remoteAddress, payload: { email, password } });
    const sprayer = '203.0.113.66';
    // One guess per email, every email different: the per address + email limit never trips, this one does.
    const statuses: number[] = [];
    for (const email of [victim, ...Array.from({ length: 5 }, () => uniqueEmail('sprayed'))]) statuses.push((await attempt(email, sprayer)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const refused = await attempt(uniqueEmail('sprayed'), sprayer);
    expect(refused.json()).toEqual({ code: 429, message: apiErrors.tooManyAttempts });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The victim's email was tried from the sprayer's address; from their own address they sign in.
    expect((await attempt(victim, '198.51.100.20', 'right-pass')).statusCode).toBe(200);
  });
});

describe('rate limit shared through Redis', () => {
  it('counts one address’s attempts on every email across instances', async () => {
    const shared = await createTestApp({
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      LOGIN_RATE_LIMIT_MAX: '100',
      LOGIN_ADDRESS_RATE_LIMIT_MAX: '4',
    });
    const b = await shared.secondInstance();
    try {
      // Its own address, so earlier runs' counters on the same Redis do not count.
      const remoteAddress = `2001:db8::${randomUUID().slice(0, 4)}:${randomUUID().slice(0, 4)}`;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const app = i % 2 === 0 ? shared.app : b.app;
        statuses.push((await app.inject({ method: 'POST', url: '/api/auth/token', remoteAddress, payload: { email: uniqueEmail('spray'), password: 'guess' } })).statusCode);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 429]);
    } finally {
      await b.close();
      await shared.close();
    }
  });
});
