import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LocksPage } from '../list/locks-page';
import { deviceSummary, eventStream, LOCKS, sampleDevice, sampleLock } from '../test-fixtures';

const online = deviceSummary(sampleDevice());
const offline = deviceSummary(sampleDevice({ deviceId: 'dev-2', connected: false }));
const waiting = deviceSummary(sampleDevice({ deviceId: 'dev-3', provisioned: false, connected: false, lastSeen: null, firmware: null }));

function setup() {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const stream = eventStream();
  stubFetch((call) => {
    if (call.url === `${LOCKS}/events`) return stream.response;
    if (call.url === LOCKS)
      return json([
        sampleLock({ id: 'lock-1', name: 'Sandbox Door', device: null }),
        sampleLock({ id: 'lock-2', name: 'Front Door', device: online }),
        sampleLock({ id: 'lock-3', name: 'Back Door', device: offline }),
        sampleLock({ id: 'lock-4', name: 'Garage', device: waiting }),
      ]);
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<LocksPage />, { path: '/:appId/locks', initial: '/app-1/locks' });
  return { stream };
}

/** The table row of a lock, found by its link. */
const row = async (name: string) => (await screen.findByRole('link', { name: `Open ${name}` })).closest('tr')!;

describe('Locks list: what each lock runs on', () => {
  it('says per lock whether it is virtual or has a device, and whether that device is online; a live event updates it', async () => {
    const { stream } = setup();
    expect(within(await row('Sandbox Door')).getByRole('img', { name: 'Virtual (sandbox) lock' })).toHaveTextContent('Virtual');
    expect(within(await row('Front Door')).getByRole('img', { name: 'Device online' })).toHaveTextContent('Online');
    expect(within(await row('Back Door')).getByRole('img', { name: 'Device offline' })).toHaveTextContent('Offline');
    expect(within(await row('Garage')).getByRole('img', { name: 'Device not set up yet' })).toHaveTextContent('Not set up');

    await screen.findByText('Live');
    stream.push('lock', sampleLock({ id: 'lock-2', name: 'Front Door', device: { ...online, connected: false } }));
    expect(await within(await row('Front Door')).findByRole('img', { name: 'Device offline' })).toBeInTheDocument();
  });
});
