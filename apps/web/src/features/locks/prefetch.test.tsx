import { waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useLocation } from 'react-router';
import { storeSignIn } from '../../lib/session';
import { makeJwt, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { usePrefetchLockPage } from './prefetch';
import { LOCKS } from './test-fixtures';

function Shell() {
  const { pathname, search } = useLocation();
  usePrefetchLockPage(pathname, search);
  return null;
}

function setup(initial: string) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  // Nothing answers: what is asked for is asked for before any card could have mounted.
  const calls = stubFetch(() => new Promise<Response>(() => {}));
  renderRoute(<Shell />, { path: '/:appId/*', initial });
  return calls;
}

describe('the shell preloads a lock page’s data', () => {
  it('asks for the lock, its shares and its activity at once, side by side', async () => {
    const calls = setup('/app-1/locks/lock-1');
    await waitFor(() =>
      expect(calls.map((c) => c.url).sort()).toEqual([`${LOCKS}/lock-1`, `${LOCKS}/lock-1/log`, `${LOCKS}/lock-1/user`]),
    );
  });

  it('leaves a filtered activity to its card, and other pages alone', async () => {
    const calls = setup('/app-1/locks/lock-1?from=2026-01-01');
    await waitFor(() => expect(calls.map((c) => c.url).sort()).toEqual([`${LOCKS}/lock-1`, `${LOCKS}/lock-1/user`]));
    const none = setup('/app-1/overview');
    await new Promise((r) => setTimeout(r, 50));
    expect(none.filter((c) => c.url.includes('/lock'))).toEqual([]);
  });
});
