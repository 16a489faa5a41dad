import { TOKEN_CHECK_IDS, TOKEN_CHECK_LABELS, type Application, type TokenCheckReport } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { type Call, json, makeJwt, nowSeconds, portalAnswer, renderRoute, sampleApplication, stubFetch } from '../../../test/helpers';
import { AuthenticationCard } from './authentication-card';

const app: Application = {
  ...sampleApplication,
  owners: ['user-1'],
  privacyPolicy: null,
  supportContact: null,
  appLink: null,
  authDomains: ['https://auth.acme.test'],
};

const header = { alg: 'ES256', kid: 'door-key', typ: 'JWT' };
const claims = { iss: 'https://auth.acme.test', sub: 'user-42', aud: 'https://elsewhere.test', email: 'ann@acme.test' };

const passing: TokenCheckReport = {
  valid: true,
  error: null,
  header,
  claims,
  applicationId: 'app-1',
  checks: TOKEN_CHECK_IDS.map((id) => ({ id, label: TOKEN_CHECK_LABELS[id], status: 'pass', message: `ok ${id}` })),
};

const failing: TokenCheckReport = {
  ...passing,
  valid: false,
  error: 'Wrong audience: aud must contain https://api.latchkey.dev (the token has https://elsewhere.test)',
  applicationId: 'app-1',
  checks: passing.checks.map((c) =>
    c.id === 'audience'
      ? { ...c, status: 'fail', message: 'Wrong audience: aud must contain https://api.latchkey.dev (the token has https://elsewhere.test)' }
      : c.id === 'signature'
        ? { ...c, status: 'skipped', message: 'Not checked: needs a matching key and a fitting algorithm' }
        : c,
  ),
};

function setup(answer: (call: Call) => Response) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  // The page's own reads are answered as the API would; the token check by the test.
  const calls = stubFetch((call) => portalAnswer(call) ?? (call.method === 'GET' && call.url === '/api/platform/application/app-1' ? json(sampleApplication) : answer(call)));
  return { calls, user: userEvent.setup() };
}

const checkCalls = (calls: Call[]) => calls.filter((c) => c.url === '/api/platform/application/app-1/auth/token-check');
/** The list item of one check, found by the label it starts with. */
function checkItem(id: (typeof TOKEN_CHECK_IDS)[number]): HTMLElement {
  const items = within(screen.getByRole('list', { name: 'Checks' })).getAllByRole('listitem');
  const item = items.find((li) => li.textContent?.startsWith(`${TOKEN_CHECK_LABELS[id]}:`));
  if (!item) throw new Error(`No check item for ${id}`);
  return item;
}

describe('Token tester', () => {
  it('shows each check failing, passing or skipped with the reason, and the decoded parts', async () => {
    const { calls, user } = setup(() => json(failing));
    renderRoute(<AuthenticationCard app={app} />);
    await user.click(screen.getByRole('button', { name: 'Test a user token' }));
    const dialog = await screen.findByRole('dialog', { name: 'Test a user token' });
    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), '  aaa.bbb.ccc  ');
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));

    await within(dialog).findByText(/The platform rejects this token: Wrong audience/);
    expect(checkCalls(calls)).toHaveLength(1);
    expect(checkCalls(calls)[0]!.method).toBe('POST');
    expect(checkCalls(calls)[0]!.body).toEqual({ token: 'aaa.bbb.ccc' });

    const list = within(dialog).getByRole('list', { name: 'Checks' });
    expect(within(list).getAllByRole('listitem')).toHaveLength(TOKEN_CHECK_IDS.length);
    expect(checkItem('audience')).toHaveTextContent('Audience: Failed');
    expect(checkItem('audience')).toHaveTextContent('the token has https://elsewhere.test');
    expect(checkItem('signature')).toHaveTextContent('Signature: Not checked');
    expect(checkItem('issuer')).toHaveTextContent('Issuer matches a registered auth domain: Passed');
    expect(checkItem('issuer')).toHaveTextContent('ok issuer');

    expect(within(dialog).getByRole('region', { name: 'Decoded header' })).toHaveTextContent('"kid": "door-key"');
    expect(within(dialog).getByRole('region', { name: 'Decoded claims' })).toHaveTextContent('"sub": "user-42"');
  });

  it('opens from the URL, reports a valid token as accepted, and closing drops the URL parameter', async () => {
    const { user } = setup(() => json(passing));
    const { router } = renderRoute(<AuthenticationCard app={app} />, { path: '/:appId/overview', initial: '/app-1/overview?tokenTester=open' });
    const dialog = await screen.findByRole('dialog', { name: 'Test a user token' });
    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), 'aaa.bbb.ccc');
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));

    expect(await within(dialog).findByText('All checks passed: the platform accepts this token.')).toBeInTheDocument();
    const items = within(within(dialog).getByRole('list', { name: 'Checks' })).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual(TOKEN_CHECK_IDS.map((id) => expect.stringContaining(`${TOKEN_CHECK_LABELS[id]}: Passed`)));

    // Editing the token hides the report that belonged to the previous one.
    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), 'x');
    expect(within(dialog).queryByRole('list', { name: 'Checks' })).toBeNull();

    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(router.state.location.search).toBe('');
  });

  it('says why when the check itself fails, and needs a token before calling', async () => {
    const { calls, user } = setup(() => json({ code: 404, message: 'Application not found' }, 404));
    renderRoute(<AuthenticationCard app={app} />);
    await user.click(screen.getByRole('button', { name: 'Test a user token' }));
    const dialog = await screen.findByRole('dialog', { name: 'Test a user token' });
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));
    expect(await within(dialog).findByText('Required')).toBeInTheDocument();
    expect(checkCalls(calls)).toHaveLength(0);

    await user.type(within(dialog).getByRole('textbox', { name: /User token/ }), 'aaa.bbb.ccc');
    await user.click(within(dialog).getByRole('button', { name: 'Check token' }));
    expect(await within(dialog).findByText('The token could not be checked: Application not found')).toBeInTheDocument();
    expect(within(dialog).queryByRole('list', { name: 'Checks' })).toBeNull();
  });
});
