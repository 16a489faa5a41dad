import { discoveryErrors, outboundErrors, TOKEN_CHECK_IDS, TOKEN_CHECK_LABELS, type Application, type PublicJwk, type TokenCheckReport } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../../app/i18n';
import { storeSignIn } from '../../../lib/session';
import { type Call, json, makeJwt, noContent, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { AuthenticationCard } from './authentication-card';

/** The Authentication card: auth domains with discovery, key expiry marks, the tester's key source. */
const DAY = 24 * 60 * 60;
const key = (kid: string, exp?: number): PublicJwk => ({
  kty: 'OKP',
  crv: 'Ed25519',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
  kid,
  use: 'sig',
  ...(exp === undefined ? {} : { exp }),
});

function setup(app: Application, answer: (call: Call) => Response | Promise<Response> = (call) => (call.method === 'POST' ? noContent() : (portalAnswer(call) ?? json(app)))) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch(answer);
  renderRoute(<AuthenticationCard app={app} />);
  return { calls, user: userEvent.setup() };
}

describe('Add Auth Domain with OpenID discovery', () => {
  it('sends discovery only when the box is ticked', async () => {
    const { calls, user } = setup(sampleApplication);
    await user.click(screen.getByRole('button', { name: 'Add Auth Domain' }));
    let dialog = await screen.findByRole('dialog', { name: 'Add Auth Domain' });
    const box = within(dialog).getByRole('checkbox', { name: 'Load signing keys from the issuer’s OpenID configuration' });
    expect(box).not.toBeChecked();
    expect(box).toHaveAccessibleDescription(/well-known\/openid-configuration/);
    await user.type(within(dialog).getByRole('textbox', { name: /Auth domain URL/ }), 'https://idp.acme.test/tenant');
    await user.click(box);
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Add Auth Domain' })).toBeNull());
    const posts = () => calls.filter((c) => c.method === 'POST' && c.url.endsWith('/auth/issuer'));
    expect(posts()[0]!.body).toEqual({ url: 'https://idp.acme.test/tenant', discovery: true });

    // Opened again: unticked, and a plain auth domain is sent as before.
    await user.click(screen.getByRole('button', { name: 'Add Auth Domain' }));
    dialog = await screen.findByRole('dialog', { name: 'Add Auth Domain' });
    expect(within(dialog).getByRole('checkbox')).not.toBeChecked();
    await user.type(within(dialog).getByRole('textbox', { name: /Auth domain URL/ }), 'https://auth.acme.test');
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(posts()).toHaveLength(2));
    expect(posts()[1]!.body).toEqual({ url: 'https://auth.acme.test' });
  });

  it('shows a refused issuer under the field, with the URL kept', async () => {
    const { user } = setup(sampleApplication, (call) => (call.method === 'POST' ? json({ code: 422, message: discoveryErrors.issuerMismatch }, 422) : (portalAnswer(call) ?? json(sampleApplication))));
    await user.click(screen.getByRole('button', { name: 'Add Auth Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Auth Domain' });
    const field = within(dialog).getByRole('textbox', { name: /Auth domain URL/ });
    await user.type(field, 'https://idp.acme.test');
    await user.click(within(dialog).getByRole('checkbox'));
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText(discoveryErrors.issuerMismatch)).toBeInTheDocument();
    expect(field).toHaveValue('https://idp.acme.test');
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('a slow refusal (the loading dialog came and went) stays under the field', async () => {
    const slow = () => new Promise<Response>((r) => setTimeout(() => r(json({ code: 422, message: discoveryErrors.configNotFound }, 422)), 400));
    const { calls, user } = setup(sampleApplication, (call) => (call.method === 'POST' ? slow() : (portalAnswer(call) ?? json(sampleApplication))));
    await user.click(screen.getByRole('button', { name: 'Add Auth Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Auth Domain' });
    await user.type(within(dialog).getByRole('textbox', { name: /Auth domain URL/ }), 'https://idp.acme.test');
    await user.click(within(dialog).getByRole('checkbox'));
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText(discoveryErrors.configNotFound, {}, { timeout: 3000 })).toBeInTheDocument();
    // Focus moving about (the loading dialog handing it back) does not wipe the refusal.
    await user.tab();
    await new Promise((r) => setTimeout(r, 400));
    expect(within(dialog).getByText(discoveryErrors.configNotFound)).toBeInTheDocument();
    // The same value may be sent again (the refusal may have been passing): Add asks the server once more.
    const posts = () => calls.filter((c) => c.method === 'POST').length;
    expect(posts()).toBe(1);
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(posts()).toBe(2));
    // Once the second answer is in (the loading dialog gone), the refusal is still there.
    expect(await within(dialog).findByText(discoveryErrors.configNotFound, {}, { timeout: 3000 })).toBeInTheDocument();
    const field = await within(dialog).findByRole('textbox', { name: /Auth domain URL/ }, { timeout: 3000 });
    // Editing the URL does.
    await user.type(field, 'x');
    expect(within(dialog).queryByText(discoveryErrors.configNotFound)).toBeNull();
  });

  it('in German: the option, and a refusal in the contract’s German', async () => {
    await setLanguage('de');
    const { user } = setup(sampleApplication, (call) => (call.method === 'POST' ? json({ code: 400, message: outboundErrors.privateAddress }, 400) : (portalAnswer(call) ?? json(sampleApplication))));
    await user.click(screen.getByRole('button', { name: 'Auth-Domain hinzufügen' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByRole('textbox'), 'https://10.0.0.1');
    await user.click(within(dialog).getByRole('checkbox', { name: 'Signaturschlüssel aus der OpenID-Konfiguration des Ausstellers laden' }));
    await user.click(within(dialog).getByRole('button', { name: 'Hinzufügen' }));
    expect(await within(dialog).findByText(/^Die URL muss auf eine öffentliche Adresse zeigen/)).toBeInTheDocument();
  });

  it('the CORS dialog has no discovery option', async () => {
    const { user } = setup(sampleApplication);
    await user.click(screen.getByRole('button', { name: 'Add CORS Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add CORS Domain' });
    expect(within(dialog).queryByRole('checkbox')).toBeNull();
  });

  it('lists where a discovered auth domain’s keys come from', () => {
    setup({
      ...sampleApplication,
      authDomains: ['https://idp.acme.test', 'https://plain.acme.test'],
      authDomainDiscovery: { 'https://idp.acme.test': { jwksUri: 'https://idp.acme.test/keys' } },
    });
    const list = screen.getByRole('list', { name: 'Auth Domains' });
    const [discovered, plain] = within(list).getAllByRole('listitem');
    expect(discovered).toHaveTextContent('OpenID discovery · Keys from https://idp.acme.test/keys');
    expect(plain).not.toHaveTextContent('OpenID discovery');
  });
});

describe('Auth key expiry on the card', () => {
  it('marks an expired key and one expiring within 14 days, with a warning each; a later expiry is not flagged', () => {
    const now = nowSeconds();
    setup({
      ...sampleApplication,
      authKeys: {
        gone: key('gone', now - DAY),
        soon: key('soon', now + 10 * DAY),
        later: key('later', now + 30 * DAY),
        forever: key('forever'),
      },
    });
    const chips = screen.getByRole('region', { name: 'Auth Keys' });
    const item = (kid: string) => within(chips).getByRole('button', { name: `Edit key ${kid}` }).closest('li')!;
    expect(item('gone')).toHaveTextContent('Expired');
    expect(item('soon')).toHaveTextContent('Expires soon');
    expect(within(chips).getByRole('button', { name: 'Edit key gone' })).toHaveAccessibleDescription(/^Key gone expired on .+ and no longer verifies tokens$/);
    expect(within(chips).getByRole('button', { name: 'Edit key soon' })).toHaveAccessibleDescription(/^Key soon expires on /);
    expect(within(chips).getByRole('button', { name: 'Edit key later' })).toHaveAccessibleDescription('');
    expect(item('later')).not.toHaveTextContent(/Expire/);
    expect(item('forever')).not.toHaveTextContent(/Expire/);
    const alerts = within(chips).getAllByRole('alert');
    expect(alerts).toHaveLength(2);
    expect(alerts[0]).toHaveTextContent(/^Key gone expired on .+: tokens signed with it are refused\. Upload a new key\.$/);
    expect(alerts[1]).toHaveTextContent(/^Key soon expires on .+\. Upload its successor before then\.$/);
  });

  it('the key dialog explains exp, and a pasted key keeps it', async () => {
    const { calls, user } = setup(sampleApplication);
    await user.click(screen.getByRole('button', { name: 'Add Auth Key' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Auth Key' });
    expect(dialog).toHaveTextContent('Optional: an "exp" member (seconds since 1970');
    const exp = nowSeconds() + 90 * DAY;
    await user.click(within(dialog).getByRole('textbox', { name: /Public key/ }));
    await user.paste(JSON.stringify(key('with-exp', exp)));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.find((c) => c.method === 'POST')?.body).toMatchObject({ kid: 'with-exp', exp }));
  });

  it('shows no warning when no key expires', () => {
    setup({ ...sampleApplication, authKeys: { k1: key('k1', nowSeconds() + 60 * DAY) } });
    expect(within(screen.getByRole('region', { name: 'Auth Keys' })).queryByRole('alert')).toBeNull();
  });
});

describe('Token tester key source', () => {
  const report = (keySource: TokenCheckReport['keySource']): TokenCheckReport => ({
    valid: true,
    error: null,
    header: { alg: 'EdDSA', kid: 'k1' },
    claims: { iss: 'https://idp.acme.test' },
    applicationId: 'app-1',
    checks: TOKEN_CHECK_IDS.map((id) => ({ id, label: TOKEN_CHECK_LABELS[id], status: 'pass', message: `ok ${id}` })),
    keySource,
  });

  it.each([
    [{ type: 'issuer' as const, kid: 'idp-1', jwksUri: 'https://idp.acme.test/keys' }, 'Key used: Key idp-1 from the issuer’s key set (https://idp.acme.test/keys)'],
    [{ type: 'uploaded' as const, kid: 'k1' }, 'Key used: The uploaded key k1'],
  ])('names the source %j', async (source, text) => {
    const { user } = setup(sampleApplication, (call) => (call.url.endsWith('/token-check') ? json(report(source)) : (portalAnswer(call) ?? json(sampleApplication))));
    await user.click(screen.getByRole('button', { name: 'Test a user token' }));
    const dialog = await screen.findByRole('dialog', { name: 'Test a user token' });
    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), 'aaa.bbb.ccc');
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));
    expect(await within(dialog).findByTestId('token-key-source')).toHaveTextContent(text);
  });

  it('says when the key set is the last good one, and why (the contract text in the current language)', async () => {
    const source = { type: 'issuer' as const, kid: 'idp-1', jwksUri: 'https://idp.acme.test/keys', configProblem: discoveryErrors.issuerMismatch };
    const { user } = setup(sampleApplication, (call) => (call.url.endsWith('/token-check') ? json(report(source)) : (portalAnswer(call) ?? json(sampleApplication))));
    await setLanguage('de');
    await user.click(screen.getByRole('button', { name: 'Nutzer-Token testen' }));
    const dialog = await screen.findByRole('dialog', { name: 'Nutzer-Token testen' });
    await user.type(within(dialog).getByRole('textbox', { name: /Nutzer-Token/ }), 'aaa.bbb.ccc');
    await user.click(within(dialog).getByRole('button', { name: 'Token prüfen' }));
    expect(await within(dialog).findByTestId('token-key-source')).toHaveTextContent(
      'Die OpenID-Konfiguration des Ausstellers ist gerade nicht verwendbar (Die OpenID-Konfiguration gehört zu einem anderen Aussteller',
    );
  });

  it('says nothing of a source when no key matched', async () => {
    const { user } = setup(sampleApplication, (call) => (call.url.endsWith('/token-check') ? json(report(null)) : (portalAnswer(call) ?? json(sampleApplication))));
    await user.click(screen.getByRole('button', { name: 'Test a user token' }));
    const dialog = await screen.findByRole('dialog', { name: 'Test a user token' });
    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), 'aaa.bbb.ccc');
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));
    await within(dialog).findByText('All checks passed: the platform accepts this token.');
    expect(within(dialog).queryByTestId('token-key-source')).toBeNull();
  });
});
