import { authResponseSchema, passkeyErrors, type AuthResponse, type ErrorBody, type PasskeyResponse } from '@latchkey/contract';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { getSession } from '../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, sampleAccount, stubFetch } from '../../test/helpers';
import { LoginPage } from './login-page';

/** The browser's WebAuthn ceremony: what @simplewebauthn/browser would hand back from the authenticator. */
const ceremony = vi.hoisted(() => ({ startAuthentication: vi.fn() }));
vi.mock('@simplewebauthn/browser', () => ceremony);

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

describe('LoginPage returning to a deep link', () => {
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

describe('LoginPage with a passkey', () => {
  const asserted: PasskeyResponse = {
    id: 'cred-1',
    rawId: 'cred-1',
    type: 'public-key',
    response: { clientDataJSON: 'Y2xpZW50', authenticatorData: 'YXV0aA', signature: 'c2ln', userHandle: 'dXNlcg' },
    clientExtensionResults: {},
  };
  const options = { challenge: 'Y2hhbGxlbmdl', rpId: 'localhost', allowCredentials: [], userVerification: 'preferred' };

  it('signs in with the browser’s passkey ceremony and goes to /start', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' });
    const auth: AuthResponse = authResponseSchema.parse({ authToken: token, refreshToken: 'r', privateKey: 'priv', publicKey: 'pub' } satisfies AuthResponse);
    ceremony.startAuthentication.mockReset().mockResolvedValue(asserted);
    const calls = stubFetch((call) => (call.url === '/api/auth/passkey/options' ? json(options) : call.url === '/api/auth/passkey' ? json(auth) : json(sampleAccount)));
    const user = userEvent.setup();
    const { router } = renderRoute(<LoginPage />, { path: '/login', initial: '/login', extra: [{ path: '/start', element: <p>start</p> }] });
    await user.click(screen.getByRole('button', { name: 'Sign in with a passkey' }));
    expect(await screen.findByText('start')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/start');
    expect(ceremony.startAuthentication).toHaveBeenCalledWith({ optionsJSON: options });
    expect(calls.slice(0, 2).map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', '/api/auth/passkey/options', undefined],
      ['POST', '/api/auth/passkey', { response: asserted }],
    ]);
    // Signed in without a password: no bearer on the way in, the session from the answer.
    expect(calls[1]!.headers.Authorization).toBeUndefined();
    expect(getSession()).toMatchObject({ token, refreshToken: 'r', email: 'me@example.com', displayName: 'Me' });
  });

  it('a closed passkey prompt reports nothing; a passkey the service does not know is shown', async () => {
    const unknown: ErrorBody = { code: 401, message: passkeyErrors.unknown };
    ceremony.startAuthentication.mockReset().mockRejectedValueOnce(Object.assign(new Error('closed'), { name: 'NotAllowedError' })).mockResolvedValue(asserted);
    stubFetch((call) => (call.url === '/api/auth/passkey/options' ? json(options) : json(unknown, 401)));
    const user = userEvent.setup();
    renderRoute(<LoginPage />, { path: '/login', initial: '/login' });
    const button = screen.getByRole('button', { name: 'Sign in with a passkey' });
    await user.click(button);
    await vi.waitFor(() => expect(button).toBeEnabled());
    expect(screen.queryByRole('alertdialog')).toBeNull();
    await user.click(button);
    expect(await screen.findByRole('alertdialog')).toBeInTheDocument();
    expect(ceremony.startAuthentication).toHaveBeenCalledTimes(2);
  });
});
