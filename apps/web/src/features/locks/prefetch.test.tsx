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
  const { router } = renderRoute(<Shell />, { path: '/:appId/*', initial });
  return { calls, router };
}

const urls = (calls: { url: string }[]) => calls.map((c) => c.url).sort();

describe('the shell preloads a lock page’s data', () => {
  it('asks for the lock, its shares and its activity at once, side by side', async () => {
    const { calls } = setup('/app-1/locks/lock-1');
    await waitFor(() => expect(urls(calls)).toEqual([`${LOCKS}/lock-1`, `${LOCKS}/lock-1/log`, `${LOCKS}/lock-1/user`]));
  });

  it('leaves a filtered activity to its card, and other pages alone', async () => {
    // Each page is followed by a lock page: once that lock's requests are out, the shell has been through
    // the page before it, and what that page asked for (if anything) came first.
    const filtered = setup('/app-1/locks/lock-1?from=2026-01-01');
    await filtered.router.navigate('/app-1/locks/lock-2');
    await waitFor(() => expect(filtered.calls.some((c) => c.url === `${LOCKS}/lock-2/log`)).toBe(true));
    expect(urls(filtered.calls.slice(0, 2))).toEqual([`${LOCKS}/lock-1`, `${LOCKS}/lock-1/user`]);
    expect(urls(filtered.calls.slice(2))).toEqual([`${LOCKS}/lock-2`, `${LOCKS}/lock-2/log`, `${LOCKS}/lock-2/user`]);

    const other = setup('/app-1/overview');
    await other.router.navigate('/app-1/locks/lock-3');
    await waitFor(() => expect(other.calls.some((c) => c.url === `${LOCKS}/lock-3/log`)).toBe(true));
    expect(urls(other.calls)).toEqual([`${LOCKS}/lock-3`, `${LOCKS}/lock-3/log`, `${LOCKS}/lock-3/user`]);
  });
});
