import { describe, expect, it, vi } from 'vitest';
import { json, makeJwt, nowSeconds, portalAnswer, sampleAccount, sampleApplication, stubFetch } from '../test/helpers';
import { storeSignIn } from '../lib/session';
import { protectedLoader } from './guard';
import { queryClient } from './layouts/query-layout';

const args = (url: string, params: Record<string, string> = {}) => ({ request: new Request(`http://localhost${url}`), params, context: {} }) as never;

async function redirectOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (e) {
    if (e instanceof Response) return e.headers.get('Location');
    throw e;
  }
}

describe('protectedLoader (navigation guard)', () => {
  it('sends a visitor without a token to /login', async () => {
    expect(await redirectOf(protectedLoader(args('/start')))).toBe('/login');
  });

  it('lets a valid session through', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/abc/overview')))).toBeNull();
  });

  it("starts loading an application page's application with the session check, once, into the page's cache", async () => {
    queryClient.removeQueries({ queryKey: ['applications', 'app-1'] });
    const calls = stubFetch((call) => portalAnswer(call) ?? json(sampleApplication));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/app-1/overview', { appId: 'app-1' })))).toBeNull();
    await vi.waitFor(() => expect(queryClient.getQueryData(['applications', 'app-1'])).toEqual(sampleApplication));
    // Cached: the next navigation within the application does not load it again. Its preload has run
    // (asked the cache, and been answered) before the request log is read.
    const ensured = vi.spyOn(queryClient, 'ensureQueryData');
    expect(await redirectOf(protectedLoader(args('/app-1/getting-started', { appId: 'app-1' })))).toBeNull();
    await vi.waitFor(() => expect(ensured).toHaveBeenCalledTimes(1));
    await expect(ensured.mock.results[0]!.value).resolves.toEqual(sampleApplication);
    expect(calls.filter((c) => c.url.endsWith('/platform/application/app-1'))).toHaveLength(1);
    ensured.mockRestore();
  });

  it('has the account (is its email verified?) before the first signed-in page is drawn, and does not wait for it again', async () => {
    queryClient.removeQueries({ queryKey: ['account'] });
    queryClient.removeQueries({ queryKey: ['config'] });
    let answer: (r: Response) => void = () => {};
    const calls = stubFetch((call) => (call.url === '/api/account' ? new Promise<Response>((r) => (answer = r)) : (portalAnswer(call) ?? json(sampleApplication))));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    let done = false;
    const first = protectedLoader(args('/start')).then(() => (done = true));
    await vi.waitFor(() => expect(calls.some((c) => c.url === '/api/account')).toBe(true));
    // The verification banner would otherwise arrive after the page and push it down.
    expect(done).toBe(false);
    answer(json({ ...sampleAccount, emailVerified: false }));
    await first;
    expect(queryClient.getQueryData(['account'])).toMatchObject({ emailVerified: false });
    // The config too (is there an SMTP server?): the banner reads it from the cache.
    expect(calls.some((c) => c.url === '/api/config')).toBe(true);
    // Cached: the next page draws at once, without asking again.
    await protectedLoader(args('/app-1/overview', { appId: 'app-1' }));
    expect(calls.filter((c) => c.url === '/api/account')).toHaveLength(1);
  });

  it('stays on the page asked for after refreshing an expired token, not thrown out to /start', async () => {
    stubFetch((call) => portalAnswer(call) ?? json({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r2' }));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() - 5 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/abc/overview')))).toBeNull();
    expect(localStorage.getItem('refreshToken')).toBe('r2');
  });

  it('sends a signed-out visitor of a deep link to /login with the way back', async () => {
    expect(await redirectOf(protectedLoader(args('/app-1/locks/lock-1?from=2026-01-01')))).toBe(
      '/login?returnTo=%2Fapp-1%2Flocks%2Flock-1%3Ffrom%3D2026-01-01',
    );
  });

  it('logs out to /login when the refresh token is rejected', async () => {
    stubFetch(() => json({ code: 401, message: 'This session has ended. Please sign in again.' }, 401));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() - 5 }), refreshToken: 'bad', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/start')))).toBe('/login');
    expect(localStorage.getItem('token')).toBeNull();
  });
});
