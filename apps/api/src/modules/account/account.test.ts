import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors, messages } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('account', () => {
  it('reads and updates the account; email lower-cased; publicKey of this session', async () => {
    const email = uniqueEmail('Acct').replace('acct', 'ACCT');
    const s = (await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'abcde', displayName: 'Old' } })).json();
    const me = await t.app.inject({ url: '/api/account', headers: bearer(s.authToken) });
    expect(me.json()).toMatchObject({ email: email.toLowerCase(), displayName: 'Old', emailVerified: false, publicKey: s.publicKey });
    const upd = await t.app.inject({ method: 'POST', url: '/api/account', headers: bearer(s.authToken), payload: { displayName: 'New' } });
    expect(upd.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(s.authToken) })).json().displayName).toBe('New');
    const bad = await t.app.inject({ method: 'POST', url: '/api/account', headers: bearer(s.authToken), payload: { displayName: '' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe(messages.required);
  });

  it('needs a token', async () => {
    expect((await t.app.inject({ url: '/api/account' })).statusCode).toBe(401);
  });

  it('changes the password, refusing a wrong old one, and ends the other sessions', async () => {
    const email = uniqueEmail('pw');
    const a = (await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'first-pass' } })).json();
    const b = (await t.app.inject({ method: 'POST', url: '/api/auth/token', payload: { email, password: 'first-pass' } })).json();
    const wrong = await t.app.inject({ method: 'POST', url: '/api/account/password', headers: bearer(a.authToken), payload: { oldPassword: 'nope!', newPassword: 'second-pass' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toBe(apiErrors.wrongOldPassword);
    const short = await t.app.inject({ method: 'POST', url: '/api/account/password', headers: bearer(a.authToken), payload: { oldPassword: 'first-pass', newPassword: 'abc' } });
    expect(short.json().message).toBe(messages.passwordTooShort);
    const ok = await t.app.inject({ method: 'POST', url: '/api/account/password', headers: bearer(a.authToken), payload: { oldPassword: 'first-pass', newPassword: 'second-pass' } });
    expect(ok.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(a.authToken) })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/account', headers: bearer(b.authToken) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token', payload: { email, password: 'second-pass' } })).statusCode).toBe(200);
  });
});
