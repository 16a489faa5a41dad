import { accountErrors } from '@latchkey/contract';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSession } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { ForgotPasswordPage } from './forgot-password-page';
import { ResetPasswordPage } from './reset-password-page';
import { VerifyEmailPage } from './verify-email-page';

describe('Forgot password (issue 29)', () => {
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

describe('Reset password (issue 29)', () => {
  const initial = '/reset-password?userId=7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f&token=abc_DEF-123';

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

describe('Verify email (issue 29)', () => {
  it('proves the address with the link’s code', async () => {
    const calls = stubFetch(() => noContent());
    renderRoute(<VerifyEmailPage />, { path: '/verify-email', initial: '/verify-email?code=xyz' });
    expect(await screen.findByText('Thank you: your email address is verified.')).toBeInTheDocument();
    expect(calls.map((c) => [c.method, c.url])).toEqual([['PUT', '/api/account/email/verify?code=xyz']]);
  });

  it('says when the link is no good', async () => {
    stubFetch(() => json({ code: 400, message: accountErrors.verifyLinkInvalid }, 400));
    renderRoute(<VerifyEmailPage />, { path: '/verify-email', initial: '/verify-email?code=old' });
    expect(await screen.findByText(accountErrors.verifyLinkInvalid)).toBeInTheDocument();
  });
});
