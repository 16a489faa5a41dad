import { webhookErrors, type Webhook, type WebhookDelivery } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../app/i18n';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../test/helpers';
import { WebhooksPage } from './webhooks-page';

const AT = Date.UTC(2024, 2, 5, 12) / 1000;
const BASE = '/api/platform/application/app-1/webhook';
const SECRET = `whsec_${'A'.repeat(43)}=`;
const hook: Webhook = { id: 'w-1', url: 'https://api.acme.test/hooks', events: ['lock.unlocked', 'share.added'], createdAt: AT };
const delivery = (over: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
  id: 'd-1',
  eventType: 'lock.unlocked',
  status: 'failed',
  attempts: 13,
  responseStatus: 500,
  error: null,
  at: AT,
  ...over,
});

function setup(answer: (call: Call) => Response | undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => answer(call) ?? json({ code: 404, message: 'Not found' }, 404));
  renderRoute(<WebhooksPage />, { path: '/:appId/webhooks', initial: '/app-1/webhooks' });
  return { calls, u: userEvent.setup() };
}

describe('Webhooks', () => {
  it('adds an endpoint with its events and shows the secret once, with copy', async () => {
    let list: Webhook[] = [];
    const { calls, u } = setup((call) => {
      if (call.method === 'POST' && call.url === BASE) {
        list = [hook];
        return json({ ...hook, secret: SECRET }, 201);
      }
      if (call.url === BASE) return json(list);
      if (call.url.endsWith('/delivery')) return json([]);
      return undefined;
    });
    expect(await screen.findByText(/No webhooks yet/)).toBeInTheDocument();
    await u.click(screen.getByRole('button', { name: 'Add webhook' }));
    const dialog = screen.getByRole('dialog', { name: 'Add webhook' });
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('Choose at least one event')).toBeInTheDocument();
    await u.type(within(dialog).getByRole('textbox', { name: /Endpoint URL/ }), hook.url);
    await u.click(within(dialog).getByRole('checkbox', { name: 'Lock unlocked (lock.unlocked)' }));
    await u.click(within(dialog).getByRole('checkbox', { name: 'Share added (share.added)' }));
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    const secret = await screen.findByRole('dialog', { name: 'Signing secret' });
    expect(within(secret).getByText(SECRET)).toBeInTheDocument();
    expect(within(secret).getByRole('button', { name: 'Copy signing secret' })).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ url: hook.url, events: ['lock.unlocked', 'share.added'] });
    // A stray tap beside the dialog would lose the secret for good: only Done (or Escape) closes it.
    await u.click(secret.closest<HTMLElement>('.MuiDialog-container')!);
    expect(within(secret).getByText(SECRET)).toBeInTheDocument();
    await u.click(within(secret).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByText(SECRET)).toBeNull());
    expect(await screen.findByRole('cell', { name: hook.url })).toBeInTheDocument();
  });

  it('starts in the URL field, and a missing event is said to the group and focuses its first box', async () => {
    const { calls, u } = setup((call) => (call.url === BASE ? json([]) : undefined));
    await u.click(await screen.findByRole('button', { name: 'Add webhook' }));
    const dialog = screen.getByRole('dialog', { name: 'Add webhook' });
    const url = within(dialog).getByRole('textbox', { name: /Endpoint URL/ });
    await waitFor(() => expect(url).toHaveFocus());
    await u.keyboard(hook.url);
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(within(dialog).getByRole('group', { name: /Events/ })).toHaveAccessibleDescription('Choose at least one event');
    expect(within(dialog).getByRole('checkbox', { name: /lock\.unlocked/ })).toHaveFocus();
    expect(url).toHaveValue(hook.url);
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('keeps the server’s refusal of the URL under the field', async () => {
    const { u } = setup((call) => {
      if (call.method === 'POST') return json({ code: 400, message: 'The URL must start with https://' }, 400);
      if (call.url === BASE) return json([]);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: 'Add webhook' }));
    const dialog = screen.getByRole('dialog', { name: 'Add webhook' });
    await u.type(within(dialog).getByRole('textbox', { name: /Endpoint URL/ }), 'http://api.acme.test/hooks');
    await u.click(within(dialog).getByRole('checkbox', { name: /lock\.unlocked/ }));
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('The URL must start with https://')).toBeInTheDocument();
  });

  it.each([
    ['en', 'Add webhook', /Endpoint URL/, 'Add', 'This application already has a webhook for this URL'],
    ['de', 'Webhook hinzufügen', /Endpunkt-URL/, 'Hinzufügen', 'Diese Anwendung hat bereits einen Webhook für diese URL'],
  ] as const)('(%s) says under the URL field that the application already has a webhook for it, keeping what was typed', async (language, add, urlName, confirm, said) => {
    await setLanguage(language);
    const typed = 'https://API.acme.test/hooks';
    const { calls, u } = setup((call) => {
      if (call.method === 'POST') return json({ code: 409, message: webhookErrors.urlExists }, 409);
      if (call.url === BASE) return json([hook]);
      if (call.url.endsWith('/delivery')) return json([]);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: add }));
    const dialog = screen.getByRole('dialog', { name: add });
    const url = within(dialog).getByRole('textbox', { name: urlName });
    await u.type(url, typed);
    await u.click(within(dialog).getByRole('checkbox', { name: /lock\.unlocked/ }));
    await u.click(within(dialog).getByRole('button', { name: confirm }));
    await waitFor(() => expect(url).toHaveAccessibleDescription(said));
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveValue(typed);
    expect(url).toHaveFocus();
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1);
    // Still the dialog, open to fix the URL; no secret was shown.
    expect(screen.queryByRole('dialog', { name: /Signing secret|Signaturgeheimnis/ })).toBeNull();
  });

  it('shows the delivery log with status, response and attempts, and resends', async () => {
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { calls, u } = setup((call) => {
      if (call.url === BASE) return json([hook]);
      if (call.url === `${BASE}/w-1/delivery`) return json([delivery(), delivery({ id: 'd-2', eventType: 'share.added', status: 'succeeded', attempts: 1, responseStatus: 204 })]);
      // Answered only once the test has looked at the page while the resend is on its way.
      if (call.url.endsWith('/resend')) return answered.then(() => json(delivery({ status: 'pending' }), 202)) as unknown as Response;
      return undefined;
    });
    const log = await screen.findByRole('table', { name: 'Deliveries' });
    const rows = within(log).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell').slice(0, 4).map((c) => c.textContent))).toEqual([
      ['lock.unlocked', 'Failed', '500', '13'],
      ['share.added', 'Delivered', '204', '1'],
    ]);
    // Each delivery's time to the second.
    expect(within(rows[0]!).getAllByRole('cell')[4]).toHaveTextContent(/^05\/03\/2024, \d\d:\d\d:\d\d$/);
    await u.click(within(rows[0]!).getByRole('button', { name: /Resend lock\.unlocked/ }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.url === `${BASE}/w-1/delivery/d-1/resend`)).toBe(true));
    // Focus stays where it was: no Resend button turns disabled under the keyboard while one is on its way.
    for (const button of within(log).getAllByRole('button', { name: /^Resend/ })) expect(button).toBeEnabled();
    expect(within(rows[0]!).getByRole('button', { name: /Resend lock\.unlocked/ })).toHaveFocus();
    answer();
    // A sign that it worked: the row itself may not change before the next poll.
    expect(await screen.findByRole('status')).toHaveTextContent('Queued to be sent again');
  });

  it('at the limit says so and offers no Add, instead of refusing a filled-in form', async () => {
    const hooks = Array.from({ length: 10 }, (_, i) => ({ ...hook, id: `w-${i}`, url: `https://api.acme.test/hooks/${i}` }));
    setup((call) => (call.url === BASE ? json(hooks) : call.url.endsWith('/delivery') ? json([]) : undefined));
    expect(await screen.findByText('An application can have at most 10 webhooks: delete one to add another.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add webhook' })).toBeDisabled();
  });

  it('says which list failed to load, and tries again', async () => {
    let fail = true;
    const { u } = setup((call) => {
      if (call.url === BASE) return json([hook]);
      if (call.url === `${BASE}/w-1/delivery`) return fail ? json({ code: 500, message: 'Boom' }, 500) : json([delivery()]);
      return undefined;
    });
    const alert = await screen.findByText('The deliveries could not be loaded: Boom');
    fail = false;
    await u.click(within(alert.closest<HTMLElement>('[role="alert"]')!).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('table', { name: 'Deliveries' })).toBeInTheDocument();
  });

  it('says why a delivery got no answer in the reader’s language', async () => {
    await setLanguage('de');
    setup((call) => {
      if (call.url === BASE) return json([hook]);
      if (call.url === `${BASE}/w-1/delivery`) return json([delivery({ status: 'retrying', attempts: 2, responseStatus: null, error: 'The URL could not be reached: 93.184.215.14' })]);
      return undefined;
    });
    const log = await screen.findByRole('table', { name: 'Zustellungen' });
    expect(within(log).getByRole('cell', { name: 'Die URL ist nicht erreichbar: 93.184.215.14' })).toBeInTheDocument();
  });

  it('pages the delivery log with Load more, following the Link rel="next" cursor', async () => {
    const { calls, u } = setup((call) => {
      if (call.url === BASE) return json([hook]);
      if (call.url === `${BASE}/w-1/delivery`)
        return json([delivery(), delivery({ id: 'd-2', status: 'succeeded', responseStatus: 204 })], 200, { Link: `<${BASE}/w-1/delivery?cursor=c%2D2>; rel="next"` });
      if (call.url === `${BASE}/w-1/delivery?cursor=c-2`) return json([delivery({ id: 'd-3', eventType: 'share.added', status: 'succeeded', responseStatus: 202 })]);
      return undefined;
    });
    const log = await screen.findByRole('table', { name: 'Deliveries' });
    expect(within(log).getAllByRole('row')).toHaveLength(3);
    await u.click(screen.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(within(log).getAllByRole('row')).toHaveLength(4));
    await waitFor(() => expect(within(log).getAllByRole('row')[3]).toHaveFocus());
    expect(within(within(log).getAllByRole('row')[3]!).getByText('202')).toBeInTheDocument();
    expect(calls.filter((c) => c.url.includes('/delivery')).map((c) => c.url)).toEqual([`${BASE}/w-1/delivery`, `${BASE}/w-1/delivery?cursor=c-2`]);
    // The last page has no Link: nothing more to load.
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('rotates the secret and deletes, each after a confirmation', async () => {
    let list = [hook];
    const { calls, u } = setup((call) => {
      if (call.url === `${BASE}/w-1/rotate`) return json({ ...hook, secret: SECRET });
      if (call.method === 'DELETE') {
        list = [];
        return noContent();
      }
      if (call.url === BASE) return json(list);
      if (call.url.endsWith('/delivery')) return json([]);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: `Rotate the secret of ${hook.url}` }));
    await u.click(within(screen.getByRole('dialog', { name: 'Rotate the signing secret?' })).getByRole('button', { name: 'Rotate secret' }));
    expect(within(await screen.findByRole('dialog', { name: 'Signing secret' })).getByText(SECRET)).toBeInTheDocument();
    await u.click(screen.getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await u.click(screen.getByRole('button', { name: `Delete the webhook ${hook.url}` }));
    const confirm = screen.getByRole('dialog', { name: 'Delete this webhook?' });
    await u.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await u.click(screen.getByRole('button', { name: `Delete the webhook ${hook.url}` }));
    await u.click(within(screen.getByRole('dialog', { name: 'Delete this webhook?' })).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText(/No webhooks yet/)).toBeInTheDocument();
    expect(await screen.findByRole('status')).toHaveTextContent('Webhook deleted');
    // Focus does not fall to the page with the Delete button's row: it is on Add webhook.
    await waitFor(() => expect(screen.getByRole('button', { name: 'Add webhook' })).toHaveFocus());
  });
});
