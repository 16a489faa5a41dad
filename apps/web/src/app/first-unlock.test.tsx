import type { Application, PublicJwk } from '@latchkey/contract';
import { parseJwkInput } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Outlet } from 'react-router';
import { storeSignIn } from '../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, sampleApplication, stubFetch, type Call } from '../test/helpers';
import { sampleLock, sampleShare } from '../features/locks/test-fixtures';
import { UnlockGuide } from '../features/locks/guide/unlock-guide';
import { GettingStartedIndex, GettingStartedPage } from '../features/applications/getting-started/getting-started-page';

/** The way to a first unlock. */
const config = { privacyPolicyUrl: 'https://p.test', uploadBaseUrl: 'http://up.test', cdnBaseUrl: 'http://cdn.test', docsUrl: 'https://docs.test', platformAudience: 'https://aud.test' };
const APP = '/api/platform/application/app-1';
const edKey: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k', use: 'sig' };

function renderGuide(app: Application, answer: (call: Call) => Response | undefined = () => undefined, initial = '/app-1/getting-started/backend') {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => {
    const own = answer(call);
    if (own) return own;
    if (call.url === '/api/config') return json(config);
    if (call.url === `${APP}/lock`) return json([sampleLock()]);
    if (call.url === `${APP}/lock/lock-1/user`) return json([]);
    if (call.url === APP) return json(app);
    return json({ code: 404, message: 'Not found' }, 404);
  });
  const utils = renderRoute(<Outlet context={app} />, {
    path: '/:appId',
    initial,
    children: [
      {
        path: 'getting-started',
        element: <GettingStartedPage />,
        children: [
          { index: true, element: <GettingStartedIndex /> },
          { path: 'ios', element: null },
          { path: 'android', element: null },
          { path: 'javascript', element: null },
          { path: 'backend', element: <UnlockGuide /> },
        ],
      },
    ],
  });
  return { ...utils, calls, user: userEvent.setup() };
}
const command = async () => (await screen.findByRole('region', { name: /Run the example script/ })).textContent ?? '';
const value = (text: string, name: string) => new RegExp(`^${name}=(.*) \\\\$`, 'm').exec(text)?.[1];

afterEach(() => localStorage.clear());

describe('Getting Started: the way to a first unlock', () => {
  it('a first visit lands on the backend tab, which comes first; a later visit returns to the tab last looked at', async () => {
    const { router, unmount } = renderGuide({ ...sampleApplication, authKeys: { [edKey.kid]: edKey } }, undefined, '/app-1/getting-started');
    await waitFor(() => expect(router.state.location.pathname).toBe('/app-1/getting-started/backend'));
    const tabs = screen.getAllByRole('tab');
    expect(tabs[0]).toHaveAccessibleName('Your backend');
    expect(tabs[0]).toHaveAttribute('aria-selected', 'true');
    unmount();
    localStorage.setItem('latchkey.gettingStartedTab', 'android');
    const again = renderGuide(sampleApplication, undefined, '/app-1/getting-started');
    await waitFor(() => expect(again.router.state.location.pathname).toBe('/app-1/getting-started/android'));
  });

  it('shows the key’s kid and algorithm, and runs the example in a folder of its own with the key file the portal saves', async () => {
    renderGuide({ ...sampleApplication, authDomains: ['https://auth.acme.test'], authKeys: { [edKey.kid]: edKey } });
    const keyRow = (await screen.findByText('Key id (kid) and algorithm')).nextElementSibling!;
    expect(keyRow).toHaveTextContent(`${edKey.kid} (EdDSA)`);
    const text = await command();
    expect(text.split('\n').slice(0, 3)).toEqual([
      'mkdir -p latchkey-unlock && cd latchkey-unlock &&',
      'npm init -y >/dev/null && npm install jose &&',
      // The repository's example, served by this portal (a build asset; in tests Vite's file URL).
      expect.stringMatching(/^curl -fsSLo unlock-from-backend\.mjs '?http:\/\/localhost(:\d+)?\/\S*unlock-from-backend\S*\.mjs\S*'? &&$/),
    ]);
    // Read from the folder the commands run in, where the browser saved it: the example's folder is made
    // by the command itself, so the text never asks to move the key into it first.
    expect(value(text, 'KEY_FILE')).toBe(`../latchkey-${edKey.kid}.private.jwk.json`);
    expect(screen.getByText(/run the commands in the folder that holds it/)).toBeInTheDocument();
    expect(screen.queryByText(/into the latchkey-unlock folder before/)).not.toBeInTheDocument();
    expect(value(text, 'ALG')).toBeUndefined();
    expect(screen.getByText(/its private key was saved as latchkey-kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k\.private\.jwk\.json/)).toBeInTheDocument();
    expect(text).toMatch(/\nnode unlock-from-backend\.mjs$/);
  });

  it('a key saved as PEM: the command names the .pem file the portal saved, with the key’s ALG (the script takes ES256 for a PEM)', async () => {
    vi.spyOn(URL, 'createObjectURL').mockReturnValue('blob:key');
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => undefined);
    const clicks: HTMLAnchorElement[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicks.push(this);
    });
    try {
      const { calls, user, unmount } = renderGuide(sampleApplication, (call) => (call.method === 'POST' && call.url === `${APP}/auth/key` ? json({}, 201) : undefined));
      const noKey = (await screen.findByText(/No Auth Key registered yet/)).closest<HTMLElement>('[role="alert"]')!;
      await user.click(within(noKey).getByRole('button', { name: 'Generate a key pair' }));
      const dialog = screen.getByRole('dialog', { name: 'Generate a key pair' });
      await user.click(within(dialog).getByRole('radio', { name: /PEM/ }));
      await user.click(within(dialog).getByRole('button', { name: 'Generate and save' }));
      expect(await within(dialog).findByText(/Auth Key .+ \(EdDSA\) added/)).toBeInTheDocument();
      const sent = calls.find((c) => c.method === 'POST' && c.url === `${APP}/auth/key`)!.body as PublicJwk;
      expect(clicks[0]!.download).toBe(`latchkey-${sent.kid}.private.pem`);
      unmount();

      // The guide, once the application has that key: the file saved, not a .jwk.json that is not there.
      renderGuide({ ...sampleApplication, authDomains: ['https://auth.acme.test'], authKeys: { [sent.kid]: sent } });
      const text = await command();
      expect(value(text, 'KEY_FILE')).toBe(`../latchkey-${sent.kid}.private.pem`);
      expect(value(text, 'ALG')).toBe('EdDSA');
      expect(screen.getByText(new RegExp(`saved as latchkey-${sent.kid}\\.private\\.pem`))).toBeInTheDocument();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('fills USER_EMAIL with a user the lock is shared with (a signed-in one first), else a placeholder', async () => {
    const { unmount } = renderGuide({ ...sampleApplication, authKeys: { [edKey.kid]: edKey } }, (call) =>
      call.url === `${APP}/lock/lock-1/user`
        ? json([sampleShare({ email: 'pending@acme.test', status: 'pending' }), sampleShare({ userId: 'u2', email: 'dana@acme.test', status: 'active' })])
        : undefined,
    );
    await waitFor(async () => expect(value(await command(), 'USER_EMAIL')).toBe('dana@acme.test'));
    expect(screen.getByText('Front Door is shared with dana@acme.test: the command signs its token for them (USER_EMAIL).')).toBeInTheDocument();
    unmount();
    renderGuide({ ...sampleApplication, authKeys: { [edKey.kid]: edKey } });
    await waitFor(async () => expect(value(await command(), 'USER_EMAIL')).toBe('alice@example.com'));
  });

  it('says what an auth domain is where none is registered', async () => {
    renderGuide(sampleApplication);
    expect(await screen.findByText(/An auth domain is the issuer of your user tokens: exactly the value your backend puts in their iss claim\. Any https URL of yours works/)).toBeInTheDocument();
  });

  it('without a key, generates a key pair in the browser: the private key is downloaded, only the public half is sent, with a contract-valid kid and alg', async () => {
    const created: Blob[] = [];
    const createObjectURL = vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      created.push(blob as Blob);
      return 'blob:key';
    });
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => undefined);
    const clicks: HTMLAnchorElement[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicks.push(this);
    });
    try {
      const { calls, user } = renderGuide(sampleApplication, (call) => (call.method === 'POST' && call.url === `${APP}/auth/key` ? json({}, 201) : undefined));
      const noKey = (await screen.findByText(/No Auth Key registered yet/)).closest<HTMLElement>('[role="alert"]')!;
      await user.click(within(noKey).getByRole('button', { name: 'Generate a key pair' }));
      const dialog = screen.getByRole('dialog', { name: 'Generate a key pair' });
      expect(within(dialog).getByRole('radio', { name: /^Ed25519/ })).toBeChecked();
      await user.click(within(dialog).getByRole('button', { name: 'Generate and save' }));
      expect(await within(dialog).findByText(/Auth Key .+ \(EdDSA\) added/)).toBeInTheDocument();

      const post = calls.find((c) => c.method === 'POST' && c.url === `${APP}/auth/key`)!;
      const sent = post.body as PublicJwk;
      expect(parseJwkInput(JSON.stringify(sent))).toEqual({ ok: true, key: sent });
      expect(sent).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      expect(JSON.stringify(calls.map((c) => c.body))).not.toMatch(/"d"/);

      expect(clicks).toHaveLength(1);
      expect(clicks[0]!.download).toBe(`latchkey-${sent.kid}.private.jwk.json`);
      const file = JSON.parse(await created[0]!.text()) as Record<string, string>;
      expect(file).toMatchObject({ kid: sent.kid, alg: 'EdDSA', x: sent.x, d: expect.any(String) });
      expect(within(dialog).getByText(new RegExp(`saved as latchkey-${sent.kid}\\.private\\.jwk\\.json`))).toBeInTheDocument();
    } finally {
      createObjectURL.mockRestore();
      click.mockRestore();
    }
  });
});
