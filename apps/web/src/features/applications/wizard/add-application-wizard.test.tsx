import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
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
  const view = renderRoute(<AddApplicationWizard />, { path: '/start/new', initial: '/start/new', extra: [{ path: '/start', element: <p>start screen</p> }, { path: '/:appId/getting-started', element: <p>getting started</p> }] });
  return { calls, view, user: userEvent.setup() };
}

const box = (name: RegExp) => screen.getByRole('textbox', { name });

/** Answers the wizard's saves: creates app-9, accepts every update, hands out a logo upload URL. */
function setupSaving() {
  return setup((call) => {
    if (call.method === 'POST' && call.url === '/api/platform/application')
      return new Response(null, { status: 201, headers: { Location: '/api/platform/application/app-9' } });
    if (call.method === 'POST' && call.url === '/api/platform/application/app-9/logo')
      return json({ uploadUrl: 'http://up.test/logos/app-9/0a1b.png?expires=9&sig=x' });
    if (call.method === 'POST' && call.url === '/api/platform/application/app-9') return noContent();
    return undefined;
  });
}

const updates = (calls: Call[]) => calls.filter((c) => c.method === 'POST' && c.url === '/api/platform/application/app-9');

type User = ReturnType<typeof userEvent.setup>;

async function fill(user: User, name: RegExp, value: string) {
  await user.clear(box(name));
  await user.paste(value);
}

async function next(user: User, label = 'Next') {
  await waitFor(() => expect(screen.getByRole('button', { name: label })).toBeEnabled());
  await user.click(screen.getByRole('button', { name: label }));
}

async function reachEmailInfo(user: User) {
  await fill(user, /Application name/, 'Acme Doors');
  await fill(user, /Company name/, 'Acme Ltd');
  await fill(user, /Mailing address/, '1 Road');
  await next(user);
  await screen.findByRole('heading', { name: 'Application URLs' });
  await fill(user, /Privacy policy URL/, 'https://acme.test/privacy');
  await fill(user, /Support contact/, 'mailto:help@acme.test');
  await next(user);
  await screen.findByRole('heading', { name: 'Email info' });
}

async function reachBranding(user: User) {
  await reachEmailInfo(user);
  await fill(user, /Sender email/, 'no-reply@acme.test');
  await fill(user, /Sender name/, 'Acme');
  await next(user);
  await screen.findByRole('heading', { name: 'Branding' });
}

/** The logo's PUT goes through XMLHttpRequest (for its progress); this one answers 200 at once. */
function stubUploads() {
  const puts: { method: string; url: string; contentType: string | undefined }[] = [];
  class FakeXhr {
    upload = { onprogress: null };
    status = 0;
    statusText = '';
    onload: (() => void) | null = null;
    onerror: (() => void) | null = null;
    private request = { method: '', url: '', contentType: undefined as string | undefined };
    open(method: string, url: string) {
      this.request = { ...this.request, method, url };
    }
    setRequestHeader(name: string, value: string) {
      if (name.toLowerCase() === 'content-type') this.request.contentType = value;
    }
    send() {
      puts.push(this.request);
      this.status = 200;
      setTimeout(() => this.onload?.(), 0);
    }
  }
  vi.stubGlobal('XMLHttpRequest', FakeXhr);
  return puts;
}

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
    // The preview is fetched with the owner's token and shown through srcdoc.
    await waitFor(() => expect(calls.find((c) => c.url.startsWith('/api/email/preview/app-9'))?.headers.Authorization).toMatch(/^Bearer /));
    expect(screen.getByTitle('Email preview')).not.toHaveAttribute('src');
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

  it('enables Next on Email info as soon as the step is valid, while the last field still has focus', async () => {
    const { user } = setupSaving();
    await reachEmailInfo(user);
    await user.click(box(/Sender email/));
    await user.keyboard('keys@acme.test');
    await user.click(box(/Sender name/));
    await user.keyboard('Acme Doors');
    // No blur yet: the first click on Next must not be lost to it.
    expect(box(/Sender name/)).toHaveFocus();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled());
  }, 20_000);

  it('puts a refused field’s message under it and focuses it, with no Failed dialog (email step: emailPreferences.*)', async () => {
    const { user } = setup((call) => {
      if (call.method === 'POST' && call.url === '/api/platform/application')
        return new Response(null, { status: 201, headers: { Location: '/api/platform/application/app-9' } });
      const body = call.body as { emailPreferences?: object } | undefined;
      if (call.method === 'POST' && body?.emailPreferences)
        return json({ code: 400, message: 'The request is not valid', errors: [{ path: 'emailPreferences.senderName', message: 'Too long for an email header' }] }, 400);
      if (call.method === 'POST') return noContent();
      return undefined;
    });
    await reachEmailInfo(user);
    await fill(user, /Sender email/, 'keys@acme.test');
    await fill(user, /Sender name/, 'Acme Doors');
    await next(user);
    expect(await screen.findByText('Too long for an email header')).toBeInTheDocument();
    expect(box(/Sender name/)).toHaveFocus();
    expect(box(/Sender name/)).toHaveValue('Acme Doors');
    expect(screen.queryByRole('alertdialog', { name: 'Failed' })).toBeNull();
    expect(screen.getByRole('heading', { name: 'Email info' })).toBeInTheDocument();
  }, 20_000);

  it('keeps the colours typed on Branding through Back and Next without saving them until Finish', async () => {
    const { calls, user, view } = setupSaving();
    await reachBranding(user);
    await fill(user, /Primary colour/, '#CC3333');
    await fill(user, /Secondary colour/, '#FFAA00');
    const savedBeforeBack = updates(calls).length;

    await user.click(screen.getByRole('button', { name: 'Back' }));
    await screen.findByRole('heading', { name: 'Email info' });
    expect(updates(calls)).toHaveLength(savedBeforeBack);
    // The chosen colours already show in this step's preview.
    await waitFor(() => expect(calls.some((c) => c.url.startsWith('/api/email/preview/app-9') && c.url.includes('primaryColour=%23CC3333'))).toBe(true));

    await next(user);
    await screen.findByRole('heading', { name: 'Branding' });
    expect(box(/Primary colour/)).toHaveValue('#CC3333');
    expect(box(/Secondary colour/)).toHaveValue('#FFAA00');

    await next(user, 'Finish');
    const success = await screen.findByRole('dialog', { name: 'Success' });
    expect(updates(calls).at(-1)?.body).toMatchObject({ emailPreferences: { primaryColour: '#CC3333', secondaryColour: '#FFAA00' } });
    // As its words promise, the button opens the new application's Getting Started.
    await user.click(within(success).getByRole('button', { name: "Let's get started" }));
    await waitFor(() => expect(view.router.state.location.pathname).toBe('/app-9/getting-started'));
  });

  it('keeps Email info typed before Back, invalid input and its message included, and saves it only with Next', async () => {
    const { calls, user } = setupSaving();
    await reachEmailInfo(user);
    await fill(user, /Sender email/, 'not-an-email');
    await fill(user, /Sender name/, 'Acme Support');
    expect(await screen.findByText('Invalid email address')).toBeInTheDocument();

    // Back is not held up by the invalid address.
    await user.click(screen.getByRole('button', { name: 'Back' }));
    await screen.findByRole('heading', { name: 'Application URLs' });
    expect(updates(calls).some((c) => JSON.stringify(c.body).includes('emailPreferences'))).toBe(false);

    await next(user);
    await screen.findByRole('heading', { name: 'Email info' });
    expect(box(/Sender email/)).toHaveValue('not-an-email');
    expect(box(/Sender name/)).toHaveValue('Acme Support');
    expect(await screen.findByText('Invalid email address')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();

    await fill(user, /Sender email/, 'no-reply@acme.test');
    await next(user);
    await screen.findByRole('heading', { name: 'Branding' });
    expect(updates(calls).at(-1)?.body).toMatchObject({
      emailPreferences: { senderEmail: 'no-reply@acme.test', senderName: 'Acme Support' },
    });
  });

  it('saves an uploaded logo to the application at once and reloads the Branding preview to show it', async () => {
    const puts = stubUploads();
    const { calls, user } = setupSaving();
    await reachBranding(user);
    const frameBefore = screen.getByTitle('Email preview');
    const savedBefore = updates(calls).length;

    await user.upload(screen.getByLabelText('Upload logo'), new File(['png'], 'logo.png', { type: 'image/png' }));

    // Saved right away, before Finish: only the logoUrl.
    await waitFor(() => expect(updates(calls).slice(savedBefore).map((c) => c.body)).toEqual([{ logoUrl: 'http://cdn.test/logos/app-9/0a1b.png' }]));
    expect(calls.find((c) => c.url === '/api/platform/application/app-9/logo')?.body).toEqual({ contentType: 'image/png' });
    expect(puts).toEqual([{ method: 'PUT', url: 'http://up.test/logos/app-9/0a1b.png?expires=9&sig=x', contentType: 'image/png' }]);
    // The server renders the stored application: a new frame loads it, now with the logo.
    await waitFor(() => expect(screen.getByTitle('Email preview')).not.toBe(frameBefore));
    expect(await screen.findByRole('status')).toHaveTextContent('Your logo has been uploaded!');
    expect(await screen.findByRole('img', { name: 'Logo' })).toHaveAttribute('src', 'http://cdn.test/logos/app-9/0a1b.png');
  });
});
