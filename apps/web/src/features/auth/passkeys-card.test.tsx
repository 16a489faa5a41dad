import { accountErrors, passkeyErrors, passkeySchema, type ErrorBody, type Passkey, type PasskeyResponse } from '@latchkey/contract';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../test/helpers';
import { PasskeysCard } from './passkeys-card';

/** The browser's WebAuthn ceremony: what @simplewebauthn/browser would hand back from the authenticator. */
const ceremony = vi.hoisted(() => ({ startRegistration: vi.fn() }));
vi.mock('@simplewebauthn/browser', () => ceremony);

const created: PasskeyResponse = {
  id: 'cred-1',
  rawId: 'cred-1',
  type: 'public-key',
  response: { clientDataJSON: 'Y2xpZW50', attestationObject: 'YXR0ZXN0', transports: ['internal'] },
  clientExtensionResults: {},
};
const now = nowSeconds();
const laptop: Passkey = passkeySchema.parse({ id: 'cred-0', name: 'My laptop', createdAt: now - 86_400, lastUsedAt: now - 60 } satisfies Passkey);
const added: Passkey = passkeySchema.parse({ id: 'cred-1', name: 'Passkey 2', createdAt: now, lastUsedAt: null } satisfies Passkey);
const options = { challenge: 'Y2hhbGxlbmdl', rp: { id: 'localhost', name: 'Latchkey' }, user: { id: 'dXNlcg', name: 'me@example.com', displayName: 'Me' }, pubKeyCredParams: [] };
const error = (code: number, message: string): ErrorBody => ({ code, message });

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/**
 * The service as the card meets it. `secondFactor`: the session signed in with a passkey (the options come at
 * once); otherwise the options want the emailed code `goodCode` (asked for without one: 423).
 */
function stubService({ secondFactor = false, goodCode = '246810' } = {}) {
  let list: Passkey[] = [laptop];
  return stubFetch((call: Call) => {
    if (call.url === '/api/account/passkeys' && call.method === 'GET') return json(list);
    if (call.url === '/api/account/passkeys/options') {
      const code = (call.body as { code?: string } | undefined)?.code;
      if (secondFactor) return json(options);
      if (code === undefined) return json(error(423, passkeyErrors.codeSent), 423);
      return code === goodCode ? json(options) : json(error(400, passkeyErrors.codeWrong), 400);
    }
    if (call.url === '/api/account/passkeys' && call.method === 'POST') {
      list = [added, ...list];
      return json(added, 201);
    }
    if (call.method === 'DELETE') {
      list = list.filter((p) => `/api/account/passkeys/${p.id}` !== call.url);
      return noContent();
    }
    return json(error(404, 'Not found'), 404);
  });
}

const renderCard = () => renderRoute(<PasskeysCard Section={Section} />);

beforeEach(() => {
  ceremony.startRegistration.mockReset().mockResolvedValue(created);
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, email: 'me@example.com' }), refreshToken: 'r' });
});

describe('PasskeysCard', () => {
  it('lists the passkeys with when they were added and last used', async () => {
    stubService();
    renderCard();
    const card = screen.getByRole('region', { name: 'Passkeys' });
    expect(await within(card).findByText('My laptop')).toBeInTheDocument();
    expect(within(card).getByText(/^Added .* · Last used /)).toBeInTheDocument();
  });

  it('a password session: the emailed code first — a wrong one is asked again, the right one adds the passkey', async () => {
    const calls = stubService();
    const user = userEvent.setup();
    renderCard();
    await screen.findByText('My laptop');
    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm it is you' });
    expect(dialog).toHaveTextContent('We sent a six-digit code to me@example.com');
    // No WebAuthn ceremony before the second factor.
    expect(ceremony.startRegistration).not.toHaveBeenCalled();
    const field = within(dialog).getByLabelText('Code from the email');
    await user.type(field, '11a1111');
    expect(field).toHaveValue('111111');
    await user.click(within(dialog).getByRole('button', { name: 'Continue' }));
    expect(await within(dialog).findByText(passkeyErrors.codeWrong)).toBeInTheDocument();
    expect(field).toHaveValue('');
    expect(ceremony.startRegistration).not.toHaveBeenCalled();

    await user.type(field, '246810');
    await user.click(within(dialog).getByRole('button', { name: 'Continue' }));
    expect(await screen.findByText('Passkey added')).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(await screen.findByText('Passkey 2')).toBeInTheDocument();
    expect(ceremony.startRegistration).toHaveBeenCalledWith({ optionsJSON: options });
    const posts = calls.filter((c) => c.method === 'POST').map((c) => [c.url, c.body]);
    expect(posts).toEqual([
      ['/api/account/passkeys/options', undefined],
      ['/api/account/passkeys/options', { code: '111111' }],
      ['/api/account/passkeys/options', { code: '246810' }],
      ['/api/account/passkeys', { response: created }],
    ]);
  });

  it('"Send a new code" asks for another; Cancel adds nothing', async () => {
    const calls = stubService({ goodCode: 'never' });
    const user = userEvent.setup();
    renderCard();
    await user.click(await screen.findByRole('button', { name: 'Add a passkey' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm it is you' });
    await user.click(within(dialog).getByRole('button', { name: 'Send a new code' }));
    expect(await within(dialog).findByRole('status')).toHaveTextContent('A new code is on its way');
    expect(calls.filter((c) => c.url === '/api/account/passkeys/options' && c.body === undefined)).toHaveLength(2);

    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(ceremony.startRegistration).not.toHaveBeenCalled();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/account/passkeys')).toBe(false);
    expect(screen.getByRole('button', { name: 'Add a passkey' })).toBeEnabled();
  });

  it('shows the service’s refusal of a code (too many tries) in the dialog', async () => {
    stubFetch((call) => {
      if (call.url === '/api/account/passkeys' && call.method === 'GET') return json([]);
      const code = (call.body as { code?: string } | undefined)?.code;
      return code ? json(error(400, accountErrors.codeTooManyTries), 400) : json(error(423, passkeyErrors.codeSent), 423);
    });
    const user = userEvent.setup();
    renderCard();
    expect(await screen.findByText('You have no passkeys yet.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm it is you' });
    await user.type(within(dialog).getByLabelText('Code from the email'), '123456');
    await user.click(within(dialog).getByRole('button', { name: 'Continue' }));
    expect(await within(dialog).findByText(accountErrors.codeTooManyTries)).toBeInTheDocument();
  });

  it('a passkey session: no code, straight to the browser’s ceremony; a closed prompt reports nothing', async () => {
    const calls = stubService({ secondFactor: true });
    const user = userEvent.setup();
    renderCard();
    await screen.findByText('My laptop');
    ceremony.startRegistration.mockRejectedValueOnce(Object.assign(new Error('closed'), { name: 'NotAllowedError' }));
    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    await vi.waitFor(() => expect(ceremony.startRegistration).toHaveBeenCalledTimes(1));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    expect(await screen.findByText('Passkey added')).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(calls.filter((c) => c.url === '/api/account/passkeys/options').map((c) => c.body)).toEqual([undefined, undefined]);
  });

  it('removes a passkey', async () => {
    const calls = stubService();
    const user = userEvent.setup();
    renderCard();
    await user.click(await screen.findByRole('button', { name: 'Remove the passkey My laptop' }));
    expect(await screen.findByText('You have no passkeys yet.')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/account/passkeys/cred-0')).toBe(true);
  });
});
