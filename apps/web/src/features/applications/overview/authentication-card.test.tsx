import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { AuthenticationCard } from './authentication-card';

const KEY = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' };

function setup(answer: (url: string) => Response = () => noContent()) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => (call.method === 'POST' ? answer(call.url) : (portalAnswer(call) ?? json(sampleApplication))));
  renderRoute(<AuthenticationCard app={sampleApplication} />);
  return { calls, user: userEvent.setup() };
}

describe('Authentication card audience', () => {
  it('shows the platform audience tokens must carry, with a copy button', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    const config = { privacyPolicyUrl: 'https://p.test', uploadBaseUrl: 'http://up.test', cdnBaseUrl: 'http://cdn.test', docsUrl: 'https://docs.test', platformAudience: 'https://portal.acme.test' };
    stubFetch((call) => (call.url === '/api/config' ? json(config) : json(sampleApplication)));
    renderRoute(<AuthenticationCard app={sampleApplication} />);
    const section = await screen.findByRole('region', { name: 'Audience (aud)' }, { timeout: 5000 });
    expect(section).toHaveTextContent('User tokens your backend signs must carry this audience in their aud claim.');
    expect(within(section).getByText('https://portal.acme.test')).toBeInTheDocument();
    await userEvent.setup().click(within(section).getByRole('button', { name: 'Copy Audience (aud)' }));
    expect(await navigator.clipboard.readText()).toBe('https://portal.acme.test');
    // The card adds no status region of its own: the page's one notice says it (and 'saved' notices stay unique).
    expect(await screen.findByRole('status')).toHaveTextContent('Copied');
  });
});

describe('Authentication card dialogs', () => {
  it('keeps Add Auth Key open with invalid JSON: the text stays and the error is under the field', async () => {
    const { calls, user } = setup();
    await user.click(screen.getByRole('button', { name: 'Add Auth Key' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Auth Key' });
    const field = within(dialog).getByRole('textbox', { name: /Public key/ });
    await user.click(field);
    await user.paste('{"kty": "OKP",');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));

    expect(await within(dialog).findByText('The key is not valid JSON')).toBeInTheDocument();
    expect(field).toHaveValue('{"kty": "OKP",');
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(field).toHaveFocus();
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);

    await user.clear(field);
    await user.paste(JSON.stringify(KEY));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Add Auth Key' })).toBeNull());
    expect(calls.find((c) => c.method === 'POST')?.body).toMatchObject(KEY);
    expect(await screen.findByRole('status')).toHaveTextContent('You successfully added an Auth Key!');
  });

  it('says what is wrong with a domain as it is typed, and Required once an empty field is left', async () => {
    const { user } = setup();
    await user.click(screen.getByRole('button', { name: 'Add CORS Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add CORS Domain' });
    const field = within(dialog).getByRole('textbox', { name: /CORS domain URL/ });
    await user.type(field, 'http://insecure.example.com');
    // Still in the field: the reason the Add button is disabled is already under it.
    expect(await within(dialog).findByText('Not a valid SECURE url (make sure to add https://)')).toBeInTheDocument();
    expect(field).toHaveFocus();
    expect(within(dialog).getByRole('button', { name: 'Add' })).toBeDisabled();
    await user.clear(field);
    await user.tab(); // leave the emptied field
    expect(await within(dialog).findByText('Required')).toBeInTheDocument();
  });

  it('keeps Add CORS Domain open with the server’s refusal under the field', async () => {
    const { user } = setup(() => json({ code: 409, message: 'This CORS domain is already registered on this application' }, 409));
    await user.click(screen.getByRole('button', { name: 'Add CORS Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add CORS Domain' });
    const field = within(dialog).getByRole('textbox', { name: /CORS domain URL/ });
    await user.type(field, 'https://web.acme.test');
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('This CORS domain is already registered on this application')).toBeInTheDocument();
    expect(field).toHaveValue('https://web.acme.test');
    expect(field).toHaveFocus();
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });
});
