import { accountErrors } from '@latchkey/contract';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSession } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { ForgotPasswordPage } from './forgot-password-page';
import { ResetPasswordPage } from './reset-password-page';
import { VerifyEmailPage } from './verify-email-page';

describe('Forgot password', () => {
  it('sends the email and says the same thing whatever the address', async () => {
    const calls = stubFetch(() => noContent());
    const user = userEvent.setup();
    renderRoute(<ForgotPasswordPage />, { path: '/forgot-password', initial: '/forgot-password' });
    await user.type(screen.getByLabelText(/Email/), 'someone@example.com');
    await user.click(screen.getByRole('button', { name: 'Send me a link' }));
    expect(await screen.findByRole('status')).toHaveTextContent('If someone@example.com has an account, a link to choose a new password is on its way.');
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([['POST', '/api/account/password/reset/initialize', { email: 'someone@example.com' }]]);
    expect(calls[0]!.headers.Authorization).toBeUndefined();
  });

  it('checks the email before sending', async () => {
    const calls = stubFetch(() => noContent());
    const user = userEvent.setup();
    renderRoute(<ForgotPasswordPage />, { path: '/forgot-password', initial: '/forgot-password' });
    await user.type(screen.getByLabelText(/Email/), 'not-an-email');
    await user.click(screen.getByRole('button', { name: 'Send me a link' }));
    expect(await screen.findByText('Invalid email address')).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });
});

describe('Reset password', () => {
  const initial = '/reset-password#userId=7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f&token=abc_DEF-123';

  it('sets the new password with the link, signs in and goes to /start', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600, sid: 's', email: 'me@example.com' });
    const calls = stubFetch((call) =>
      call.url === '/api/account/password/reset/verify'
        ? json({ authToken: token, refreshToken: 'r', privateKey: 'a', publicKey: 'b' })
        : json({ userId: 'u', email: 'me@example.com', displayName: 'Me', emailVerified: true, publicKey: null }),
    );
    const user = userEvent.setup();
    renderRoute(<ResetPasswordPage />, { path: '/reset-password', initial, extra: [{ path: '/start', element: <p>start</p> }] });
    await user.type(screen.getByLabelText(/^New password/), 'abc');
    await user.type(screen.getByLabelText(/Repeat password/), 'abd');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByText('Needs to be at least 5 characters')).toBeInTheDocument();
    expect(screen.getByText('Passwords are not matching')).toBeInTheDocument();
    await user.clear(screen.getByLabelText(/^New password/));
    await user.type(screen.getByLabelText(/^New password/), 'brand-new');
    await user.clear(screen.getByLabelText(/Repeat password/));
    await user.type(screen.getByLabelText(/Repeat password/), 'brand-new');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByText('start')).toBeInTheDocument();
    expect(calls[0]!.body).toEqual({ userId: '7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f', token: 'abc_DEF-123', password: 'brand-new' });
    expect(getSession().token).toBe(token);
  });

  it('reads the link from the fragment once and takes it out of the address bar', async () => {
    stubFetch(() => noContent());
    const { router } = renderRoute(<ResetPasswordPage />, { path: '/reset-password', initial });
    expect(await screen.findByLabelText(/^New password/)).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.hash).toBe(''));
    expect(router.state.location.pathname).toBe('/reset-password');
    // Still the form: the link's values were kept when they left the URL.
    expect(screen.getByLabelText(/^New password/)).toBeInTheDocument();
  });

  it('still takes a link mailed with its values in the query', async () => {
    const calls = stubFetch(() => json({ code: 400, message: accountErrors.resetLinkUsed }, 400));
    const user = userEvent.setup();
    const { router } = renderRoute(<ResetPasswordPage />, { path: '/reset-password', initial: '/reset-password?userId=7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f&token=older' });
    await user.type(screen.getByLabelText(/^New password/), 'brand-new');
    await user.type(screen.getByLabelText(/Repeat password/), 'brand-new');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByText(accountErrors.resetLinkUsed)).toBeInTheDocument();
    expect(calls[0]!.body).toMatchObject({ userId: '7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f', token: 'older' });
    expect(router.state.location.search).toBe('');
  });

  it('a used link says so and offers a new one', async () => {
    stubFetch(() => json({ code: 400, message: accountErrors.resetLinkUsed }, 400));
    const user = userEvent.setup();
    renderRoute(<ResetPasswordPage />, { path: '/reset-password', initial });
    await user.type(screen.getByLabelText(/^New password/), 'brand-new');
    await user.type(screen.getByLabelText(/Repeat password/), 'brand-new');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByText(accountErrors.resetLinkUsed)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Send a new link' })).toHaveAttribute('href', '/forgot-password');
    expect(screen.queryByLabelText(/^New password/)).toBeNull();
  });
});

describe('Verify email', () => {
  it('proves the address with the link’s code, sent in the body, and takes the code out of the address bar', async () => {
    const calls = stubFetch(() => noContent());
    const { router } = renderRoute(<VerifyEmailPage />, { path: '/verify-email', initial: '/verify-email#code=xyz' });
    expect(await screen.findByText('Thank you: your email address is verified.')).toBeInTheDocument();
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([['PUT', '/api/account/email/verify', { code: 'xyz' }]]);
    expect(router.state.location.hash).toBe('');
  });

  it('still takes a link mailed with its code in the query, and sends it in the body', async () => {
    const calls = stubFetch(() => noContent());
    renderRoute(<VerifyEmailPage />, { path: '/verify-email', initial: '/verify-email?code=older' });
    expect(await screen.findByText('Thank you: your email address is verified.')).toBeInTheDocument();
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([['PUT', '/api/account/email/verify', { code: 'older' }]]);
  });

  it('says when the link is no good', async () => {
    stubFetch(() => json({ code: 400, message: accountErrors.verifyLinkInvalid }, 400));
    renderRoute(<VerifyEmailPage />, { path: '/verify-email', initial: '/verify-email#code=old' });
    expect(await screen.findByText(accountErrors.verifyLinkInvalid)).toBeInTheDocument();
  });
});
