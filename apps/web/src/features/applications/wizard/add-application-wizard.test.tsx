import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../../test/helpers';
import { storeSignIn } from '../../../lib/session';
import { AddApplicationWizard } from './add-application-wizard';

const config = { privacyPolicyUrl: 'https://p.test', uploadBaseUrl: 'http://up.test', cdnBaseUrl: 'http://cdn.test', docsUrl: 'https://docs.test', platformAudience: 'https://aud.test' };

function setup(respond: (call: Call) => Response | undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => {
    if (call.url === '/api/config') return json(config);
    return respond(call) ?? json([]);
  });
  const view = renderRoute(<AddApplicationWizard />, { path: '/start/new', initial: '/start/new', extra: [{ path: '/start', element: <p>start screen</p> }] });
  return { calls, view, user: userEvent.setup() };
}

const box = (name: RegExp) => screen.getByRole('textbox', { name });

describe('AddApplicationWizard', () => {
  it('creates on step 0, updates on step 1 with empty URLs as null, and keeps Next disabled while invalid', async () => {
    const { calls, user } = setup((call) => {
      if (call.method === 'POST' && call.url === '/api/platform/application')
        return new Response(null, { status: 201, headers: { Location: '/api/platform/application/app-9' } });
      if (call.method === 'POST' && call.url === '/api/platform/application/app-9') return noContent();
      return undefined;
    });

    const next = screen.getByRole('button', { name: 'Next' });
    expect(next).toBeDisabled();
    expect(screen.queryByRole('button', { name: 'Back' })).toBeNull();

    await user.type(box(/Application name/), 'Acme Doors');
    await user.type(box(/Company name/), 'Acme Ltd');
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
    await user.type(box(/Mailing address/), '1 Road');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Next' }));

    await screen.findByRole('heading', { name: 'Application URLs' });
    const create = calls.find((c) => c.method === 'POST' && c.url === '/api/platform/application');
    expect(create?.body).toEqual({ name: 'Acme Doors', companyName: 'Acme Ltd', mailingAddress: '1 Road' });
    expect(screen.queryByRole('button', { name: 'Back' })).toBeNull();

    await user.type(box(/Privacy policy URL/), 'not a url');
    expect(await screen.findByText('Not a valid url (make sure to add https:// or http://)')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
    await user.clear(box(/Privacy policy URL/));
    await user.type(box(/Privacy policy URL/), 'https://acme.test/privacy');
    await user.type(box(/Support contact/), 'mailto:help@acme.test');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Next' }));

    await screen.findByRole('heading', { name: 'Email info' });
    const update = calls.find((c) => c.method === 'POST' && c.url === '/api/platform/application/app-9');
    expect(update?.body).toEqual({ privacyPolicy: 'https://acme.test/privacy', supportContact: 'mailto:help@acme.test', appLink: null });
    expect(screen.getByRole('button', { name: 'Back' })).toBeInTheDocument();
    expect(screen.getByTitle('Email preview')).toHaveAttribute('src', expect.stringContaining('/api/email/preview/app-9'));
  });

  it('stays on the step and shows the server message when the save fails', async () => {
    const { calls, user } = setup((call) =>
      call.method === 'POST' ? json({ code: 400, message: 'The request is not valid' }, 400) : undefined,
    );
    await user.type(box(/Application name/), 'A');
    await user.type(box(/Company name/), 'B');
    await user.type(box(/Mailing address/), 'C');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Next' }));

    const dialog = await screen.findByRole('alertdialog', { name: 'Failed' });
    expect(within(dialog).getByText('The request is not valid')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    expect(await screen.findByRole('heading', { name: 'Application info' })).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1);
  });
});
