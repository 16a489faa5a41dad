import { accountSchema, type Account, type ErrorBody } from '@latchkey/contract';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, noContent, renderRoute, sampleAccount, sampleConfig, stubFetch } from '../../test/helpers';
import { VerifyEmailBanner } from './verify-email-banner';

const unverified: Account = accountSchema.parse({ ...sampleAccount, email: 'new@example.com', emailVerified: false } satisfies Account);

describe('VerifyEmailBanner', () => {
  it('until the email is verified: a banner whose "Send again" asks for a new link and says so', async () => {
    const calls = stubFetch((call) => (call.url === '/api/account' ? json(unverified) : noContent()));
    const user = userEvent.setup();
    renderRoute(<VerifyEmailBanner />);
    const banner = await screen.findByRole('region', { name: /Please verify your email address: we sent a link to new@example.com/ });
    expect(banner).toHaveTextContent('at most 5 emails a day');
    await user.click(within(banner).getByRole('button', { name: 'Send again' }));
    expect(await screen.findByText('A new link is on its way to new@example.com')).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.url)).toEqual(['/api/account/email/reverify']);
  });

  it('says why a new link was not sent (too many asked for)', async () => {
    const refused: ErrorBody = { code: 429, message: 'Too many requests. Try again in 60 minutes.' };
    stubFetch((call) => (call.url === '/api/account' ? json(unverified) : json(refused, 429)));
    const user = userEvent.setup();
    renderRoute(<VerifyEmailBanner />);
    const banner = await screen.findByRole('region', { name: /Please verify your email address/ });
    await user.click(within(banner).getByRole('button', { name: 'Send again' }));
    expect(await within(banner).findByText(/— Too many requests/)).toBeInTheDocument();
    expect(screen.queryByText(/A new link is on its way/)).toBeNull();
  });

  it('shows nothing once the email is verified', async () => {
    stubFetch(() => json(sampleAccount));
    const { queryClient } = renderRoute(<VerifyEmailBanner />);
    await expect.poll(() => queryClient.getQueryData(['account'])).toEqual(sampleAccount);
    expect(screen.queryByRole('region')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Send again' })).toBeNull();
  });

  it('without SMTP (the config the navigation guard loaded), says the link is in the Outbox', async () => {
    stubFetch((call) => (call.url === '/api/account' ? json(unverified) : noContent()));
    const { queryClient } = renderRoute(<VerifyEmailBanner />);
    queryClient.setQueryData(['config'], { ...sampleConfig, emailDelivery: 'outbox' });
    const banner = await screen.findByRole('region', { name: /Please verify your email address/ });
    expect(banner).toHaveTextContent('This service sends no real email (SMTP_URL is not set): the link is in the Outbox of each of your applications.');
  });

  it('with SMTP, says nothing of an Outbox, and never fetches the config itself', async () => {
    const calls = stubFetch((call) => (call.url === '/api/account' ? json(unverified) : noContent()));
    const { queryClient } = renderRoute(<VerifyEmailBanner />);
    queryClient.setQueryData(['config'], { ...sampleConfig, emailDelivery: 'smtp' });
    const banner = await screen.findByRole('region', { name: /Please verify your email address/ });
    expect(banner).not.toHaveTextContent('SMTP_URL');
    expect(calls.some((c) => c.url === '/api/config')).toBe(false);
  });
});
