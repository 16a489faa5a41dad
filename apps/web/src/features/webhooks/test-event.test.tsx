import { outboundErrors, type Webhook, type WebhookDelivery } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch, type Call } from '../../test/helpers';
import { WebhooksPage } from './webhooks-page';

/** Webhooks in development — the OUTBOUND_ALLOW hint, and "Send a test event". */
const AT = Date.UTC(2024, 2, 5, 12) / 1000;
const BASE = '/api/platform/application/app-1/webhook';
const hook: Webhook = { id: 'w-1', url: 'https://api.acme.test/hooks', events: ['lock.unlocked'], createdAt: AT };

function setup(answer: (call: Call) => Response | undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => answer(call) ?? json({ code: 404, message: 'Not found' }, 404));
  renderRoute(<WebhooksPage />, { path: '/:appId/webhooks', initial: '/app-1/webhooks' });
  return { calls, u: userEvent.setup() };
}

describe('Webhooks in development', () => {
  it('a localhost URL refused by a development service says that OUTBOUND_ALLOW lets it through', async () => {
    const { u } = setup((call) => {
      if (call.method === 'POST' && call.url === BASE)
        return json({ code: 400, message: `${outboundErrors.notHttps}: 127.0.0.1:4899`, hint: { outboundAllow: '127.0.0.1' } }, 400);
      if (call.url === BASE) return json([]);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: 'Add webhook' }));
    const dialog = screen.getByRole('dialog', { name: 'Add webhook' });
    await u.type(within(dialog).getByRole('textbox', { name: /Endpoint URL/ }), 'http://127.0.0.1:4899/hooks');
    await u.click(within(dialog).getByRole('checkbox', { name: 'Lock unlocked (lock.unlocked)' }));
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('The URL must start with https://: 127.0.0.1:4899')).toBeInTheDocument();
    expect(within(dialog).getByText(/start it with OUTBOUND_ALLOW=127\.0\.0\.1 to let it call this address/)).toBeInTheDocument();
  });

  it('without a hint (a production service) says nothing of OUTBOUND_ALLOW', async () => {
    const { u } = setup((call) => {
      if (call.method === 'POST' && call.url === BASE) return json({ code: 400, message: `${outboundErrors.notHttps}: 10.0.0.7` }, 400);
      if (call.url === BASE) return json([]);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: 'Add webhook' }));
    const dialog = screen.getByRole('dialog', { name: 'Add webhook' });
    await u.type(within(dialog).getByRole('textbox', { name: /Endpoint URL/ }), 'http://10.0.0.7/hooks');
    await u.click(within(dialog).getByRole('checkbox', { name: 'Lock unlocked (lock.unlocked)' }));
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('The URL must start with https://: 10.0.0.7')).toBeInTheDocument();
    expect(within(dialog).queryByText(/OUTBOUND_ALLOW/)).toBeNull();
  });

  it('sends a test event to an endpoint and says what became of it, from the delivery log', async () => {
    const queued: WebhookDelivery = { id: 'd-test', eventType: 'webhook.test', status: 'pending', attempts: 0, responseStatus: null, error: null, at: AT };
    let log: WebhookDelivery[] = [];
    const { calls, u } = setup((call) => {
      if (call.method === 'POST' && call.url === `${BASE}/w-1/test`) {
        log = [queued];
        return json(queued, 202);
      }
      if (call.url === BASE) return json([hook]);
      if (call.url === `${BASE}/w-1/delivery`) return json(log);
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: `Send a test event to ${hook.url}` }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'POST' && c.url === `${BASE}/w-1/test`)).toHaveLength(1));
    expect(await screen.findByText(/Test event sent to the queue/)).toBeInTheDocument();
    // The log shows it (named by its type), and once it is delivered the result says so.
    expect(await screen.findByText('webhook.test')).toBeInTheDocument();
    log = [{ ...queued, status: 'succeeded', attempts: 1, responseStatus: 204 }];
    await waitFor(() => expect(screen.getByText('Test event delivered: the endpoint answered HTTP 204.')).toBeInTheDocument(), { timeout: 8000 });
  }, 15_000);
});
