import { describe, expect, it } from 'vitest';
import { json, makeJwt, nowSeconds, stubFetch } from '../test/helpers';
import { storeSignIn } from '../lib/session';
import { protectedLoader } from './guard';

const args = (url: string) => ({ request: new Request(`http://localhost${url}`), params: {}, context: {} }) as never;

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

  it("goes to the 'locks' route (/start) after refreshing an expired token", async () => {
    stubFetch(() => json({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r2' }));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() - 5 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/abc/overview')))).toBe('/start');
  });

  it('logs out to /login when the refresh token is rejected', async () => {
    stubFetch(() => json({ code: 401, message: 'This session has ended. Please sign in again.' }, 401));
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() - 5 }), refreshToken: 'bad', privateKey: 'a', publicKey: 'b' });
    expect(await redirectOf(protectedLoader(args('/start')))).toBe('/login');
    expect(localStorage.getItem('token')).toBeNull();
  });
});
