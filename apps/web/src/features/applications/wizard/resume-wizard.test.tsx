import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Outlet } from 'react-router';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { OverviewPage } from '../overview/overview-page';
import { AddApplicationWizard } from './add-application-wizard';
import { unfinishedSteps } from './wizard-steps';

// Left after the URLs step: no sender yet.
const unfinished = { ...sampleApplication, emailPreferences: { ...sampleApplication.emailPreferences, senderEmail: null, senderName: null } };

describe('an application left part-way through the wizard', () => {
  it('names the steps it still lacks', () => {
    expect(unfinishedSteps(unfinished)).toEqual([2]);
    expect(unfinishedSteps({ ...unfinished, privacyPolicy: null })).toEqual([1, 2]);
    const done = { ...unfinished, emailPreferences: { ...unfinished.emailPreferences, senderEmail: 'a@b.test', senderName: 'Acme' } };
    expect(unfinishedSteps(done)).toEqual([]);
  });

  it('says on its overview what is missing and offers to resume', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    stubFetch((call) => portalAnswer(call) ?? json([]));
    // As the shell hands it: the loaded application through the outlet's context.
    renderRoute(<Outlet context={unfinished} />, { path: '/:appId', initial: '/app-1/overview', children: [{ path: 'overview', element: <OverviewPage /> }] });
    expect(await screen.findByText('Setup not finished — still missing: Email info')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Resume setup' })).toHaveAttribute('href', '/start/new?resume=app-1');
  });

  it('resumes the wizard at the first missing step with what is stored, and creates nothing new', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    const calls = stubFetch((call) => (call.method === 'POST' ? noContent() : call.url.endsWith('/app-1') ? json(unfinished) : (portalAnswer(call) ?? json([]))));
    const user = userEvent.setup();
    renderRoute(<AddApplicationWizard />, { path: '/start/new', initial: '/start/new?resume=app-1' });
    expect(await screen.findByRole('heading', { name: 'Email info' })).toBeInTheDocument();

    await user.type(screen.getByRole('textbox', { name: /Sender email/ }), 'no-reply@acme.test');
    await user.type(screen.getByRole('textbox', { name: /Sender name/ }), 'Acme');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByRole('heading', { name: 'Branding' })).toBeInTheDocument();
    const posts = calls.filter((c) => c.method === 'POST');
    expect(posts.map((c) => c.url)).toEqual(['/api/platform/application/app-1']);
    expect(posts[0]!.body).toMatchObject({ emailPreferences: { senderEmail: 'no-reply@acme.test', senderName: 'Acme' } });
  });
});
