import { accountErrors } from '@latchkey/contract';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, noContent, renderRoute, stubFetch } from '../../test/helpers';
import { AccountPage } from './account-page';

const now = Math.floor(Date.now() / 1000);
const sessions = [
  { id: 's1', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0', createdAt: now - 100, lastUsedAt: now - 10, current: true, passkey: false },
  { id: 's2', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Version/18.0 Mobile Safari/604.1', createdAt: now - 9000, lastUsedAt: now - 3600, current: false, passkey: true },
];

function stub(deleteAnswer = () => noContent()) {
  return stubFetch((call) => {
    if (call.url === '/api/account' && call.method === 'GET') return json({ userId: 'u', email: 'me@example.com', displayName: 'Me', emailVerified: false, publicKey: null });
    if (call.url === '/api/account/sessions') return json(sessions);
    if (call.url === '/api/account' && call.method === 'DELETE') return deleteAnswer();
    return noContent();
  });
}

describe('AccountPage', () => {
  it('shows the profile, whether the email is verified, and the sessions; ends one', async () => {
    const calls = stub();
    const user = userEvent.setup();
    renderRoute(<AccountPage />, { path: '/account', initial: '/account' });
    expect(await screen.findByDisplayValue('Me')).toBeInTheDocument();
    expect(screen.getByText('me@example.com')).toBeInTheDocument();
    expect(screen.getByText('Not verified')).toBeInTheDocument();
    const list = screen.getByRole('region', { name: 'Where you are signed in' });
    expect(await within(list).findByText('Chrome on Linux')).toBeInTheDocument();
    expect(within(list).getByText('This browser')).toBeInTheDocument();
    expect(within(list).getByText('Safari on iOS')).toBeInTheDocument();
    expect(within(list).getByText(/signed in with a passkey/)).toBeInTheDocument();
    await user.click(within(list).getByRole('button', { name: 'End the session of Safari on iOS' }));
    expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/account/sessions/s2')).toBe(true);

    await user.click(screen.getByRole('button', { name: 'Send again' }));
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/account/email/reverify')).toBe(true);
  });

  it('says why the account was not deleted while its owner is the last owner of an application', async () => {
    stub(() => json({ code: 409, message: accountErrors.lastOwner }, 409));
    const user = userEvent.setup();
    renderRoute(<AccountPage />, { path: '/account', initial: '/account' });
    await user.click(await screen.findByRole('button', { name: 'Delete my account' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete my account' }));
    expect(await screen.findByText(accountErrors.lastOwner)).toBeInTheDocument();
  });

  it('says how hard the new password is to guess, counting the account’s own email and name as guessable', async () => {
    stub();
    const user = userEvent.setup();
    renderRoute(<AccountPage />, { path: '/account', initial: '/account' });
    const field = await screen.findByLabelText(/^New password/);
    await user.type(field, 'password');
    expect(await screen.findByText('Password strength: very weak')).toBeInTheDocument();
    await user.clear(field);
    await user.type(field, 'tuba-Orchid-57-glacier!');
    expect(await screen.findByText('Password strength: very strong')).toBeInTheDocument();
    // The account's own address is the first thing an attacker tries.
    await user.clear(field);
    await user.type(field, 'me@example.com');
    expect(await screen.findByText('Password strength: very weak')).toBeInTheDocument();
  });

  it('changes the password with the current one', async () => {
    const calls = stub();
    const user = userEvent.setup();
    renderRoute(<AccountPage />, { path: '/account', initial: '/account' });
    await user.type(await screen.findByLabelText(/Current password/), 'old-pass');
    await user.type(screen.getByLabelText(/^New password/), 'new-pass');
    await user.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText('Password changed')).toBeInTheDocument();
    expect(calls.find((c) => c.url === '/api/account/password')?.body).toEqual({ oldPassword: 'old-pass', newPassword: 'new-pass' });
  });
});
