import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { ApplicationCard } from './application-card';
import { CompanyUrlsCard } from './company-urls-card';

const owners = [
  { userId: 'user-1', email: 'me@example.com', displayName: 'Me', orphan: false, foreign: false },
  { userId: 'user-2', email: 'other@example.com', displayName: null, orphan: false, foreign: false },
];

function setup() {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, sub: 'user-1' }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => {
    if (call.url.endsWith('/owner') && call.method === 'GET') return json(owners);
    if (call.method === 'POST') return noContent();
    return json(sampleApplication);
  });
  return { calls, user: userEvent.setup() };
}

const updates = (calls: ReturnType<typeof stubFetch>) =>
  calls.filter((c) => c.method === 'POST' && c.url === '/api/platform/application/app-1');

describe('Application card edit mode', () => {
  it('sends only the changed field, drops a reverted one, and enables Save only when dirty', async () => {
    const { calls, user } = setup();
    renderRoute(<ApplicationCard app={sampleApplication} />);
    const name = screen.getByRole('textbox', { name: /Application name/ });
    expect(name).toBeDisabled();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    expect(name).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();

    // Change then revert the company: no longer dirty.
    const company = screen.getByRole('textbox', { name: /Company name/ });
    await user.type(company, 'X');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled());
    await user.type(company, '{Backspace}');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled());

    await user.clear(name);
    expect(await screen.findByText('Required')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
    await user.type(name, 'Acme Gates');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(updates(calls)).toHaveLength(1));
    expect(updates(calls)[0]!.body).toEqual({ name: 'Acme Gates' });
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Save' })).toBeNull());
    // A non-blocking notice says it worked; no dialog to dismiss.
    expect(await screen.findByRole('status')).toHaveTextContent('Saved');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('the pen puts focus in the first field, and an emptied required field says Required once left', async () => {
    const { user } = setup();
    renderRoute(<ApplicationCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    const name = screen.getByRole('textbox', { name: /Application name/ });
    await waitFor(() => expect(name).toHaveFocus());

    const company = screen.getByRole('textbox', { name: /Company name/ });
    await user.click(company);
    await user.tab();
    expect(screen.queryByText('Required')).toBeNull(); // untouched values stay quiet
    await user.clear(name);
    await user.tab();
    expect(await screen.findByText('Required')).toBeInTheDocument();
  });

  it('Cancel restores the snapshot without saving', async () => {
    const { calls, user } = setup();
    renderRoute(<ApplicationCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    const name = screen.getByRole('textbox', { name: /Application name/ });
    await user.type(name, ' edited');
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(name).toHaveValue('Acme Doors');
    expect(name).toBeDisabled();
    expect(updates(calls)).toHaveLength(0);
  });

  it('owner buttons work only in edit mode, and there is no Remove on your own entry', async () => {
    const { user } = setup();
    renderRoute(<ApplicationCard app={sampleApplication} />);
    const removeOther = await screen.findByRole('button', { name: 'Remove owner other@example.com' });
    expect(removeOther).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Add owner' })).toBeDisabled();
    expect(screen.queryByRole('button', { name: 'Remove owner me@example.com' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    expect(removeOther).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Add owner' })).toBeEnabled();
  });

  it('an owner without an account is offered an invitation: sent once confirmed, then added as an owner', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600, sub: 'user-1' }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    let invited = false;
    const calls = stubFetch((call) => {
      if (call.url.endsWith('/owner') && call.method === 'GET') return json(owners);
      if (call.url === '/api/directory/query')
        return invited ? json({ id: 'user-3', publicKey: null }) : json({ code: 404, message: 'The user with that email address has not been found' }, 404);
      if (call.url === '/api/account/invite') {
        invited = true;
        return noContent();
      }
      if (call.method === 'POST') return noContent();
      return json(sampleApplication);
    });
    const user = userEvent.setup();
    renderRoute(<ApplicationCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    await user.click(screen.getByRole('button', { name: 'Add owner' }));
    const add = await screen.findByRole('dialog', { name: 'Add owner' });
    await user.type(within(add).getByRole('textbox', { name: /Owner email/ }), 'new.owner@example.com');
    await user.click(within(add).getByRole('button', { name: 'Add' }));

    const offer = await screen.findByRole('dialog', { name: 'Invite new.owner@example.com?' });
    expect(offer).toHaveTextContent('No account uses this email yet.');
    // Nothing is sent before the owner confirms.
    expect(calls.filter((c) => c.url === '/api/account/invite')).toHaveLength(0);
    await user.click(within(offer).getByRole('button', { name: 'Send invitation' }));

    await waitFor(() => expect(screen.getAllByRole('status').map((s) => s.textContent)).toContain('Invitation sent to new.owner@example.com. They are an owner now and can open the application once they have chosen a password.'));
    const sent = calls.filter((c) => c.method === 'POST' && !c.url.endsWith('/directory/query'));
    expect(sent.map((c) => [c.url, c.body])).toEqual([
      ['/api/account/invite', { email: 'new.owner@example.com' }],
      ['/api/platform/application/app-1/owner', { userId: 'user-3' }],
    ]);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('declining the invitation sends nothing', async () => {
    const { calls, user } = setup();
    stubFetch((call) => {
      calls.push(call);
      if (call.url.endsWith('/owner') && call.method === 'GET') return json(owners);
      if (call.url === '/api/directory/query') return json({ code: 404, message: 'The user with that email address has not been found' }, 404);
      return json(sampleApplication);
    });
    renderRoute(<ApplicationCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Application' }));
    await user.click(screen.getByRole('button', { name: 'Add owner' }));
    const add = await screen.findByRole('dialog', { name: 'Add owner' });
    await user.type(within(add).getByRole('textbox', { name: /Owner email/ }), 'nobody@example.com');
    await user.click(within(add).getByRole('button', { name: 'Add' }));
    const offer = await screen.findByRole('dialog', { name: 'Invite nobody@example.com?' });
    await user.click(within(offer).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Invite nobody@example.com?' })).toBeNull());
    expect(calls.filter((c) => c.url === '/api/account/invite' || c.url.endsWith('/owner') && c.method === 'POST')).toHaveLength(0);
  });
});

describe('Company URLs card', () => {
  it('sends an emptied optional URL as null and nothing else', async () => {
    const { calls, user } = setup();
    renderRoute(<CompanyUrlsCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Company URLs' }));
    await user.clear(screen.getByRole('textbox', { name: /App link/ }));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(updates(calls)).toHaveLength(1));
    expect(updates(calls)[0]!.body).toEqual({ appLink: null });
  });

  it('shows the Failed dialog with the server message when the save fails', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    stubFetch((call) => (call.method === 'POST' ? json({ code: 400, message: 'The request is not valid' }, 400) : json(sampleApplication)));
    const user = userEvent.setup();
    renderRoute(<CompanyUrlsCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Company URLs' }));
    await user.type(screen.getByRole('textbox', { name: /App link/ }), '/x');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByRole('alertdialog', { name: 'Failed' })).toHaveTextContent('The request is not valid');
  });

  it('puts the server’s field messages under their fields and focuses the first', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    const refusal = { code: 400, message: 'The request is not valid', errors: [{ path: 'supportContact', message: 'Not a valid url or mailto address' }] };
    stubFetch((call) => (call.method === 'POST' ? json(refusal, 400) : json(sampleApplication)));
    const user = userEvent.setup();
    renderRoute(<CompanyUrlsCard app={sampleApplication} />);
    await user.click(screen.getByRole('button', { name: 'Edit Company URLs' }));
    await user.type(screen.getByRole('textbox', { name: /App link/ }), '/x');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    const support = screen.getByRole('textbox', { name: /Support contact/ });
    await waitFor(() => expect(support).toHaveFocus());
    expect(support).toHaveAccessibleDescription('Not a valid url or mailto address');
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });
});
