import { apiErrors } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { json, makeJwt, nowSeconds, sampleAccount, stubFetch } from '../test/helpers';
import { ApiError, request, requestJson } from './http';
import { getSession, storeSignIn } from './session';

describe('http client', () => {
  it('sends the bearer token and surfaces the server message on failure', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600 });
    storeSignIn({ authToken: token, refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    const calls = stubFetch(() => json({ code: 409, message: 'This auth domain is already registered by an application' }, 409));
    const error = await request('/platform/application/x/auth/issuer', { method: 'POST', body: { url: 'https://a.b' } }).catch((e) => e);
    expect(calls[0]!.headers.Authorization).toBe(`Bearer ${token}`);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, message: 'This auth domain is already registered by an application' });
  });

  it('on 401 refreshes once, even for parallel calls, and retries with the new token', async () => {
    const old = makeJwt({ exp: nowSeconds() + 600, sid: 'old' });
    const fresh = makeJwt({ exp: nowSeconds() + 600, sid: 'fresh' });
    storeSignIn({ authToken: old, refreshToken: 'r1', privateKey: 'a', publicKey: 'b' });
    const calls = stubFetch(async (call) => {
      if (call.url.endsWith('/auth/token/refresh')) {
        await new Promise((r) => setTimeout(r, 10));
        return json({ authToken: fresh, refreshToken: 'r2' });
      }
      return call.headers.Authorization === `Bearer ${fresh}` ? json(sampleAccount) : json({ code: 401, message: 'x' }, 401);
    });
    const results = await Promise.all([requestJson('/account'), requestJson('/account')]);
    expect(results).toEqual([sampleAccount, sampleAccount]);
    expect(calls.filter((c) => c.url.endsWith('/refresh'))).toHaveLength(1);
    expect(getSession().refreshToken).toBe('r2');
  });

  it('ends the session when the refresh after a 401 fails', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r1', privateKey: 'a', publicKey: 'b' });
    stubFetch(() => json({ code: 401, message: 'You need to sign in' }, 401));
    await expect(request('/account')).rejects.toMatchObject({ status: 401 });
    expect(getSession().token).toBeNull();
  });

  it('a wrong current password (401) is shown as is: no token refresh, no second password check, the session kept', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600 });
    storeSignIn({ authToken: token, refreshToken: 'r1', privateKey: 'a', publicKey: 'b' });
    const calls = stubFetch(() => json({ code: 401, message: apiErrors.wrongOldPassword }, 401));
    const error = await request('/account/password', { method: 'POST', body: { oldPassword: 'wrong', newPassword: 'abcdef' } }).catch((e) => e);
    expect(error).toMatchObject({ status: 401, message: apiErrors.wrongOldPassword });
    expect(calls.map((c) => c.url)).toEqual(['/api/account/password']);
    expect(getSession()).toMatchObject({ token, refreshToken: 'r1' });
  });

  it('reports a network failure as status 0', async () => {
    stubFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    await expect(request('/config', { auth: false })).rejects.toMatchObject({ status: 0 });
  });
});
