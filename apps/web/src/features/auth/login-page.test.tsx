import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSession } from '../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { LoginPage } from './login-page';

describe('LoginPage', () => {
  it('validates, then shows the failure dialog for wrong credentials', async () => {
    const calls = stubFetch(() => json({ code: 401, message: 'Wrong email or password' }, 401));
    const user = userEvent.setup();
    renderRoute(<LoginPage />, { path: '/login', initial: '/login' });

    await user.type(screen.getByRole('textbox', { name: /Email/ }), 'bad@');
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(await screen.findByText('Invalid email address')).toBeInTheDocument();
    expect(calls).toHaveLength(0);

    await user.type(screen.getByRole('textbox', { name: /Email/ }), 'x.com');
    await user.type(screen.getByLabelText(/Password/), 'secret');
    await user.click(screen.getByRole('button', { name: 'Login' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Wrong credentials' });
    // The message already asks to try again; the dialog does not say it a second time.
    expect(dialog).toHaveTextContent('Please check your email and password and try again.');
    expect(within(dialog).queryByText('try again')).toBeNull();
    expect(calls[0]).toMatchObject({ method: 'POST', url: '/api/auth/token', body: { email: 'bad@x.com', password: 'secret' } });
    expect(calls[0]!.headers.Accept).toBe('application/vnd.doordeck.api-v2+json');
  });

  it('stores the session with the email from the token and goes to /start', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' });
    stubFetch((call) =>
      call.url === '/api/auth/token'
        ? json({ authToken: token, refreshToken: 'r', privateKey: 'priv', publicKey: 'pub' })
        : json({ userId: 'u', email: 'me@example.com', displayName: 'Me', emailVerified: true, publicKey: null }),
    );
    const user = userEvent.setup();
    const { router } = renderRoute(<LoginPage />, { path: '/login', initial: '/login', extra: [{ path: '/start', element: <p>start</p> }] });
    await user.type(screen.getByRole('textbox', { name: /Email/ }), 'me@example.com');
    await user.type(screen.getByLabelText(/Password/), 'secret');
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(await screen.findByText('start')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/start');
    expect(getSession()).toMatchObject({ token, refreshToken: 'r', email: 'me@example.com', displayName: 'Me' });
    // The per-session key pair of the answer is not kept in browser storage.
    expect(Object.values({ ...localStorage })).not.toContain('priv');
    expect(localStorage.getItem('privateKey')).toBeNull();
    expect(localStorage.getItem('publicKey')).toBeNull();
  });
});

describe('LoginPage returning to a deep link (issue 28)', () => {
  async function signInAt(initial: string) {
    const token = makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' });
    stubFetch((call) =>
      call.url === '/api/auth/token'
        ? json({ authToken: token, refreshToken: 'r', privateKey: 'priv', publicKey: 'pub' })
        : json({ userId: 'u', email: 'me@example.com', displayName: 'Me', emailVerified: true, publicKey: null }),
    );
    const user = userEvent.setup();
    const { router } = renderRoute(<LoginPage />, {
      path: '/login',
      initial,
      extra: [
        { path: '/start', element: <p>start</p> },
        { path: '/:appId/locks/:lockId', element: <p>the lock</p> },
      ],
    });
    await user.type(screen.getByRole('textbox', { name: /Email/ }), 'me@example.com');
    await user.type(screen.getByLabelText(/Password/), 'secret');
    await user.click(screen.getByRole('button', { name: 'Login' }));
    return router;
  }

  it('goes to the page that was asked for', async () => {
    const router = await signInAt('/login?returnTo=%2Fapp-1%2Flocks%2Flock-1%3Ffrom%3D2026-01-01');
    expect(await screen.findByText('the lock')).toBeInTheDocument();
    expect(router.state.location.pathname + router.state.location.search).toBe('/app-1/locks/lock-1?from=2026-01-01');
  });

  it.each(['//evil.com', '/\\evil.com', 'https://evil.com/x', 'javascript:alert(1)'])('refuses %s and goes to /start', async (target) => {
    const router = await signInAt(`/login?returnTo=${encodeURIComponent(target)}`);
    expect(await screen.findByText('start')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/start');
  });
});

describe('LoginPage with an invitation code', () => {
  it('sends a user who signed in with a code to choose a password', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600 });
    stubFetch(() => json({ authToken: token, refreshToken: 'r', privateKey: 'p', publicKey: 'q', passwordChangeRequired: true }));
    const user = userEvent.setup();
    const { router } = renderRoute(<LoginPage />, { path: '/login', initial: '/login', extra: [{ path: '/accept-invite', element: <p>choose</p> }] });
    await user.type(screen.getByRole('textbox', { name: /Email/ }), 'new@example.com');
    await user.type(screen.getByLabelText(/Password/), 'CODE123');
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(await screen.findByText('choose')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?email=new%40example.com');
    expect(router.state.location.state).toEqual({ code: 'CODE123', signedIn: true });
  });
});
