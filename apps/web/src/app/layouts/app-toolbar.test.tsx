import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSession, storeSignIn } from '../../lib/session';
import { makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { AppToolbar } from './app-toolbar';

function signIn() {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' }), refreshToken: 'r', privateKey: 'p', publicKey: 'q' });
}

async function chooseFromUserMenu(item: string) {
  const calls = stubFetch(() => noContent());
  const user = userEvent.setup();
  const { router } = renderRoute(<AppToolbar />, { path: '/', initial: '/', extra: [{ path: '/login', element: <p>login page</p> }] });
  await user.click(screen.getByRole('button', { name: 'Account menu' }));
  await user.click(await screen.findByRole('menuitem', { name: item }));
  expect(await screen.findByText('login page')).toBeInTheDocument();
  return { calls, router };
}

describe('the user menu', () => {
  it('Logout ends this session only', async () => {
    signIn();
    const { calls, router } = await chooseFromUserMenu('Logout');
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(['POST /api/auth/token/destroy']);
    expect(router.state.location.pathname).toBe('/login');
    expect(getSession().token).toBeNull();
  });

  it('Sign out everywhere ends every session of the user, then clears this browser and goes to login', async () => {
    signIn();
    const { calls, router } = await chooseFromUserMenu('Sign out everywhere');
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(['POST /api/auth/token/destroy/all']);
    expect(calls[0]!.headers.Authorization).toMatch(/^Bearer /);
    expect(router.state.location.pathname).toBe('/login');
    expect(getSession().token).toBeNull();
  });
});
