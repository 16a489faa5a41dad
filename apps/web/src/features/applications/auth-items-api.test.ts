import type { PublicJwk } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, stubFetch } from '../../test/helpers';
import { replaceAuthKey } from './auth-items-api';

const oldKey: PublicJwk = { kty: 'OKP', crv: 'Ed25519', kid: 'k1', x: 'AAAA', use: 'sig' };

describe('replaceAuthKey (the edit-key dialog)', () => {
  it('same kid: removes, re-adds, and puts the old key back when the add fails', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    let adds = 0;
    const calls = stubFetch((call) => {
      if (call.method === 'POST' && ++adds === 1) return json({ code: 400, message: 'Unsupported curve: use Ed25519' }, 400);
      return noContent();
    });
    const edited = { ...oldKey, x: 'BBBB' };
    await expect(replaceAuthKey('app-1', oldKey, edited)).rejects.toMatchObject({ message: 'Unsupported curve: use Ed25519' });
    expect(calls.map((c) => [c.method, c.body])).toEqual([
      ['DELETE', { kid: 'k1' }],
      ['POST', edited],
      ['POST', oldKey],
    ]);
  });

  it('new kid: adds the new key before removing the old one', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    const calls = stubFetch(() => noContent());
    await replaceAuthKey('app-1', oldKey, { ...oldKey, kid: 'k2' });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', '/api/platform/application/app-1/auth/key', { ...oldKey, kid: 'k2' }],
      ['DELETE', '/api/platform/application/app-1/auth/key', { kid: 'k1' }],
    ]);
  });
});
