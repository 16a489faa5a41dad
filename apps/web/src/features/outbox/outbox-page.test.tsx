import type { SentEmail } from '@latchkey/contract';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../app/i18n';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../test/helpers';
import { OutboxPage } from './outbox-page';

const OUTBOX = '/api/platform/application/app-1/outbox';
const email = (n: number, kind = 'lock-invitation'): SentEmail => ({
  id: `email-${n}`,
  kind,
  to: `guest${n}@example.com`,
  subject: `You have a new key ${n}`,
  text: 'plain',
  createdAt: 1_700_000_000 + n,
});

function setup(emails: SentEmail[], initial = '/app-1/outbox') {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  const calls = stubFetch((call) => {
    if (call.url === OUTBOX) return json(emails);
    const id = call.url.slice(OUTBOX.length + 1);
    return new Response(
      `<html><body><h1>Branded ${id}</h1><script>parent.hacked = true</script></body></html>`,
      { headers: { 'Content-Type': 'text/html' } },
    );
  });
  const view = renderRoute(<OutboxPage />, { path: '/:appId/outbox', initial });
  return { calls, router: view.router, u: userEvent.setup() };
}

const frame = () => screen.getByTitle(/^Email: /) as HTMLIFrameElement;

describe('Outbox', () => {
  it('lists the sent emails and shows the newest as rendered, in a frame with no scripts; the choice is in the URL', async () => {
    const { calls, router, u } = setup([email(2), email(1, 'lock-share')]);
    expect(
      await screen.findByRole('button', { name: 'Show email to guest2@example.com: You have a new key 2' }),
    ).toHaveAttribute('aria-current', 'true');
    expect(screen.getByText('Invitation')).toBeInTheDocument();
    expect(screen.getByText('Lock shared')).toBeInTheDocument();
    await waitFor(() => expect(frame().getAttribute('srcdoc')).toContain('Branded email-2'));
    // No script runs in it: same origin only so the page can fit the frame to the email's height.
    expect(frame().getAttribute('sandbox')).toBe('allow-same-origin');
    expect(calls.find((c) => c.url === `${OUTBOX}/email-2`)!.headers.Authorization).toMatch(/^Bearer /);

    await u.click(screen.getByRole('button', { name: /guest1@example.com/ }));
    await waitFor(() => expect(frame().getAttribute('srcdoc')).toContain('Branded email-1'));
    expect(router.state.location.search).toBe('?email=email-1');
  });

  it('names the account’s own emails and a tile’s sign-in link by their kind', async () => {
    setup([email(3, 'account-key-code'), email(2, 'tile-sign-in'), email(1, 'account-verify-email')]);
    expect(await screen.findByText('Your account: unlock code')).toBeInTheDocument();
    expect(screen.getByText('Tile sign-in link')).toBeInTheDocument();
    expect(screen.getByText('Your account: verify email')).toBeInTheDocument();
    expect(screen.getByText(/your own account’s emails \(its codes and verification links\), which only you see/)).toBeInTheDocument();
  });

  it('opens the email named in the URL', async () => {
    setup([email(2), email(1)], '/app-1/outbox?email=email-1');
    await waitFor(() => expect(frame().getAttribute('srcdoc')).toContain('Branded email-1'));
  });

  it('says when nothing was sent yet, and what lands here', async () => {
    setup([]);
    expect(await screen.findByText(/No emails sent yet/)).toBeInTheDocument();
    // Send a test email (Email & Branding) lands here too: the owner is told where to look for it.
    expect(screen.getByText(/invitations, shares, and the test emails of Email & Branding/)).toBeInTheDocument();
  });

  it('writes when each email was sent in the reader’s language', async () => {
    const sent = new Date(2024, 2, 5, 14, 30, 7).getTime() / 1000;
    setup([{ ...email(1), createdAt: sent }]);
    expect(await screen.findByText('05/03/2024, 14:30:07')).toBeInTheDocument();
    await setLanguage('de');
    expect(await screen.findByText('05.03.2024, 14:30:07')).toBeInTheDocument();
  });

  it('in German, says that each email keeps the language it was sent in', async () => {
    await setLanguage('de');
    setup([email(1)]);
    expect(await screen.findByText('You have a new key 1')).toBeInTheDocument();
    expect(screen.getByText(/Betreff und Text stehen in der Sprache, in der das Portal beim Senden eingestellt war/)).toBeInTheDocument();
  });
});
