import type { CallToAction } from '@latchkey/contract';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { EmailBrandingCard } from './email-branding-card';

/** The live preview is the unsaved form, every field of it. */
const saved = {
  ...sampleApplication,
  supportContact: 'mailto:help@acme.test',
  emailPreferences: { ...sampleApplication.emailPreferences, senderEmail: 'doors@acme.test', senderName: 'Acme Doors Team', callToAction: null },
};

function setup(callToAction: CallToAction | null = null) {
  const app = { ...saved, emailPreferences: { ...saved.emailPreferences, callToAction } };
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) =>
    call.url.startsWith('/api/email/preview/') ? new Response('<html><body>sample</body></html>', { headers: { 'Content-Type': 'text/html' } }) : (portalAnswer(call) ?? json(app)),
  );
  renderRoute(<EmailBrandingCard app={app} />);
  const previews = () => calls.filter((c) => c.url.startsWith('/api/email/preview/')).map((c) => new URL(c.url, 'http://x').searchParams);
  return { previews, user: userEvent.setup() };
}

describe('Email & Branding card: the preview follows the unsaved form', () => {
  it('shows an unsaved sender name in the preview', async () => {
    const { previews, user } = setup();
    await user.click(screen.getByRole('button', { name: 'Edit Email & Branding' }));
    const sender = screen.getByRole('textbox', { name: /Sender name/ });
    await user.clear(sender);
    await user.type(sender, 'Night Shift');
    await waitFor(() => expect(previews().some((q) => q.get('senderName') === 'Night Shift')).toBe(true), { timeout: 2000 });
  });

  it('switching the call to action on leads to the application’s own support contact, not Latchkey’s', async () => {
    const { previews, user } = setup();
    await user.click(screen.getByRole('button', { name: 'Edit Email & Branding' }));
    await user.click(screen.getByRole('switch', { name: 'Show a call to action' }));
    expect(screen.getByRole('textbox', { name: /Button target/ })).toHaveValue('mailto:help@acme.test');
    await waitFor(() => expect(previews().some((q) => q.get('ctaTarget') === 'mailto:help@acme.test')).toBe(true), { timeout: 2000 });
  });

  it('a stored call to action switched off (unsaved) leaves the preview', async () => {
    const { previews, user } = setup({ headline: 'Stored', actionText: 'Support', actionTarget: 'https://acme.test/help' });
    await user.click(screen.getByRole('button', { name: 'Edit Email & Branding' }));
    expect(previews().every((q) => q.get('cta') === null)).toBe(true);
    await user.click(screen.getByRole('switch', { name: 'Show a call to action' }));
    await waitFor(() => expect(previews().at(-1)?.get('cta')).toBe('none'), { timeout: 2000 });
  });
});
