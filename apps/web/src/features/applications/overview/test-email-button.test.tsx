import { messages } from '@latchkey/contract';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { type Call, json, makeJwt, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { EmailBrandingCard } from './email-branding-card';

/** "Send a test email" on the Email & Branding card sends what the card shows, saved or not. */
const TEST_URL = '/api/platform/application/app-1/email/test';
const saved = {
  ...sampleApplication,
  emailPreferences: { ...sampleApplication.emailPreferences, senderEmail: 'doors@acme.test', senderName: 'Acme Doors Team' },
};

function setup(answer: (call: Call) => Response = () => json({ to: 'me@example.com', driver: 'outbox' })) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => (call.url === TEST_URL ? answer(call) : (portalAnswer(call) ?? json(saved))));
  renderRoute(<EmailBrandingCard app={saved} />);
  return { calls, user: userEvent.setup() };
}
const tests = (calls: Call[]) => calls.filter((c) => c.url === TEST_URL);

describe('Send a test email', () => {
  it('names the signed-in owner and sends the saved branding outside edit mode', async () => {
    const { calls, user } = setup();
    const button = screen.getByRole('button', { name: 'Send a test email' });
    expect(button).toHaveAccessibleDescription('Sends the preview, including unsaved changes, to me@example.com.');
    await user.click(button);
    expect(await screen.findByRole('status')).toHaveTextContent('Test email sent to me@example.com; it is also in this application’s Outbox.');
    expect(tests(calls)).toHaveLength(1);
    expect(tests(calls)[0]!.method).toBe('POST');
    expect(tests(calls)[0]!.body).toEqual({
      emailPreferences: {
        senderEmail: 'doors@acme.test',
        senderName: 'Acme Doors Team',
        onlySendEssentialEmails: true,
        callToAction: null,
        primaryColour: '#00283C',
        secondaryColour: '#45BDD1',
      },
      language: 'en',
    });
  });

  it('sends unsaved changes without saving them', async () => {
    const { calls, user } = setup();
    await user.click(screen.getByRole('button', { name: 'Edit Email & Branding' }));
    const colour = screen.getByRole('textbox', { name: /^Primary colour/ });
    await user.clear(colour);
    await user.type(colour, '#123456');
    const sender = screen.getByRole('textbox', { name: /Sender name/ });
    await user.clear(sender);
    await user.type(sender, 'Night Shift');
    await user.click(screen.getByRole('button', { name: 'Send a test email' }));
    await waitFor(() => expect(tests(calls)).toHaveLength(1));
    expect(tests(calls)[0]!.body).toMatchObject({ emailPreferences: { primaryColour: '#123456', senderName: 'Night Shift' } });
    // Nothing was saved: the only call that changes anything would be a POST to the application itself.
    expect(calls.filter((c) => c.method === 'POST' && c.url === '/api/platform/application/app-1')).toHaveLength(0);
    // Still editing, with the changes kept.
    expect(colour).toHaveValue('#123456');
    expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled();
  });

  it('a refused value shows under its field; a rate limit in the Failed dialog', async () => {
    let status = 400;
    const { user } = setup(() =>
      status === 400
        ? json({ code: 400, message: 'The request is not valid', errors: [{ path: 'emailPreferences.primaryColour', message: messages.invalidHexColour }] }, 400)
        : json({ code: 429, message: 'Too many attempts. Please wait and try again.' }, 429, { 'retry-after': '60' }),
    );
    await user.click(screen.getByRole('button', { name: 'Send a test email' }));
    expect(await screen.findByText(messages.invalidHexColour)).toBeInTheDocument();
    expect(screen.queryByRole('alertdialog')).toBeNull();

    status = 429;
    await user.click(screen.getByRole('button', { name: 'Send a test email' }));
    // The limit and when to try again (Retry-After: 60), not a bare "too many attempts".
    expect(await screen.findByRole('alertdialog')).toHaveTextContent('You can send 5 test emails every 10 minutes. Try again in about 1 min.');
  });
});
