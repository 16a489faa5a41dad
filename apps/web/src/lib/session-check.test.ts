import { describe, expect, it } from 'vitest';
import { json, makeJwt, nowSeconds, stubFetch } from '../test/helpers';
import { refreshSession } from './http';
import { getSession, storeSignIn } from './session';
import { checkSession } from './session-check';

function signIn(exp: number, refreshToken = 'refresh-1') {
  storeSignIn({ authToken: makeJwt({ exp }), refreshToken, privateKey: 'priv', publicKey: 'pub' });
}

describe('checkSession (the session check before each protected page)', () => {
  it('is logged out without a token', async () => {
    expect(await checkSession(refreshSession)).toBe('logged-out');
  });

  it('accepts an unexpired token without calling the server', async () => {
    const calls = stubFetch(() => json({}, 500));
    signIn(nowSeconds() + 600);
    expect(await checkSession(refreshSession)).toBe('valid');
    expect(calls).toHaveLength(0);
  });

  it('refreshes an expired token with the refresh token and stores the rotated pair', async () => {
    const fresh = makeJwt({ exp: nowSeconds() + 600 });
    const calls = stubFetch(() => json({ authToken: fresh, refreshToken: 'refresh-2' }));
    signIn(nowSeconds() - 1);
    expect(await checkSession(refreshSession)).toBe('refreshed');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('/api/auth/token/refresh');
    expect(calls[0]!.method).toBe('POST');
    expect(calls[0]!.headers.Authorization).toBe('Bearer refresh-1');
    expect(getSession().token).toBe(fresh);
    expect(getSession().refreshToken).toBe('refresh-2');
  });

  it('logs out and clears storage when the refresh fails', async () => {
    stubFetch(() => json({ code: 401, message: 'This session has ended. Please sign in again.' }, 401));
    signIn(nowSeconds() - 1);
    localStorage.setItem('appId', 'app-1');
    expect(await checkSession(refreshSession)).toBe('logged-out');
    expect(getSession().token).toBeNull();
    expect(localStorage.length).toBe(0);
  });

  it('logs out an expired token when there is no refresh token', async () => {
    const calls = stubFetch(() => json({}));
    signIn(nowSeconds() - 1, '');
    localStorage.removeItem('refreshToken');
    expect(await checkSession(refreshSession)).toBe('logged-out');
    expect(calls).toHaveLength(0);
  });
});
