import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSession } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { AcceptInvitePage } from './accept-invite-page';

describe('AcceptInvitePage (account creation from an invitation link)', () => {
  it('signs in with the code, changes the password, signs in again and goes to /start', async () => {
    const codeToken = makeJwt({ exp: nowSeconds() + 600, sid: 'code' });
    const finalToken = makeJwt({ exp: nowSeconds() + 600, sid: 'final', email: 'new@example.com' });
    const calls = stubFetch((call) => {
      if (call.url === '/api/auth/token') {
        const { password } = call.body as { password: string };
        return password === 'CODE1'
          ? json({ authToken: codeToken, refreshToken: 'r1', privateKey: 'a', publicKey: 'b', passwordChangeRequired: true })
          : json({ authToken: finalToken, refreshToken: 'r2', privateKey: 'c', publicKey: 'd' });
      }
      if (call.url === '/api/account/password') return noContent();
      return json({ userId: 'u', email: 'new@example.com', displayName: 'New', emailVerified: true, publicKey: null });
    });
    const user = userEvent.setup();
    const { router } = renderRoute(<AcceptInvitePage />, {
      path: '/accept-invite',
      initial: '/accept-invite#email=new%40example.com&code=CODE1',
      extra: [{ path: '/start', element: <p>start</p> }],
    });
    // The link's code leaves the address bar once read; the page keeps it.
    await waitFor(() => expect(router.state.location.hash).toBe(''));
    await user.type(screen.getByLabelText(/^Password/), 'chosen-pw');
    await user.type(screen.getByLabelText(/Repeat password/), 'chosen-pw');
    await user.click(screen.getByRole('button', { name: 'Choose password' }));
    expect(await screen.findByText('start')).toBeInTheDocument();
    const sequence = calls.filter((c) => c.method === 'POST').map((c) => [c.url, c.body]);
    expect(sequence).toEqual([
      ['/api/auth/token', { email: 'new@example.com', password: 'CODE1' }],
      ['/api/account/password', { oldPassword: 'CODE1', newPassword: 'chosen-pw' }],
      ['/api/auth/token', { email: 'new@example.com', password: 'chosen-pw' }],
    ]);
    expect(calls.find((c) => c.url === '/api/account/password')!.headers.Authorization).toBe(`Bearer ${codeToken}`);
    expect(getSession()).toMatchObject({ token: finalToken, refreshToken: 'r2', email: 'new@example.com' });
  });

  it('after a code sign-in on /login (the code in router state), keeps the code when the email leaves the address bar', async () => {
    const finalToken = makeJwt({ exp: nowSeconds() + 600, sid: 'final', email: 'new@example.com' });
    const calls = stubFetch((call) => {
      if (call.url === '/api/account/password') return noContent();
      if (call.url === '/api/auth/token') return json({ authToken: finalToken, refreshToken: 'r2', privateKey: 'c', publicKey: 'd' });
      return json({ userId: 'u', email: 'new@example.com', displayName: 'New', emailVerified: true, publicKey: null });
    });
    const user = userEvent.setup();
    const { router } = renderRoute(<AcceptInvitePage />, {
      path: '/accept-invite',
      initial: '/login',
      extra: [
        { path: '/login', element: <p>login</p> },
        { path: '/start', element: <p>start</p> },
      ],
    });
    await router.navigate('/accept-invite?email=new%40example.com', { state: { code: 'CODE1', signedIn: true } });
    await waitFor(() => expect(router.state.location.search).toBe(''));
    expect(router.state.location.state).toEqual({ code: 'CODE1', signedIn: true });
    await user.type(await screen.findByLabelText(/^Password/), 'chosen-pw');
    await user.type(screen.getByLabelText(/Repeat password/), 'chosen-pw');
    await user.click(screen.getByRole('button', { name: 'Choose password' }));
    expect(await screen.findByText('start')).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'POST').map((c) => [c.url, c.body])).toEqual([
      ['/api/account/password', { oldPassword: 'CODE1', newPassword: 'chosen-pw' }],
      ['/api/auth/token', { email: 'new@example.com', password: 'chosen-pw' }],
    ]);
  });

  it('still takes an invitation mailed with its email and code in the query, and takes them out of the address bar', async () => {
    const calls = stubFetch(() => json({ code: 401, message: 'Wrong email or password' }, 401));
    const user = userEvent.setup();
    const { router } = renderRoute(<AcceptInvitePage />, { path: '/accept-invite', initial: '/accept-invite?email=old%40example.com&code=OLD1' });
    expect(await screen.findByText(/old@example\.com/)).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.search).toBe(''));
    await user.type(screen.getByLabelText(/^Password/), 'chosen-pw');
    await user.type(screen.getByLabelText(/Repeat password/), 'chosen-pw');
    await user.click(screen.getByRole('button', { name: 'Choose password' }));
    await waitFor(() => expect(calls.some((c) => c.url === '/api/auth/token')).toBe(true));
    expect(calls.find((c) => c.url === '/api/auth/token')!.body).toEqual({ email: 'old@example.com', password: 'OLD1' });
  });
});
