import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { Outlet } from 'react-router';
import { GettingStartedIndex, GettingStartedPage } from '../features/applications/getting-started/getting-started-page';
import { DeviceGuide } from '../features/locks/guide/device-guide';
import { UnlockGuide } from '../features/locks/guide/unlock-guide';
import { sampleLock } from '../features/locks/test-fixtures';
import { storeSignIn } from '../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, sampleApplication, sampleConfig, stubFetch } from '../test/helpers';

const APP = '/api/platform/application/app-1';

function renderGuide(initial: string, locks = [sampleLock()]) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  stubFetch((call) => {
    if (call.url === '/api/config') return json(sampleConfig);
    if (call.url === `${APP}/lock`) return json(locks);
    if (call.url === `${APP}/lock/lock-1/user`) return json([]);
    return json({ code: 404, message: 'Not found' }, 404);
  });
  const utils = renderRoute(<Outlet context={sampleApplication} />, {
    path: '/:appId',
    initial,
    children: [
      {
        path: 'getting-started',
        element: <GettingStartedPage />,
        children: [
          { index: true, element: <GettingStartedIndex /> },
          { path: 'ios', element: null },
          { path: 'android', element: null },
          { path: 'javascript', element: null },
          { path: 'backend', element: <UnlockGuide /> },
          { path: 'device', element: <DeviceGuide /> },
        ],
      },
    ],
  });
  return { ...utils, user: userEvent.setup() };
}

/** Getting Started's path to a real lock, beside the sandbox path. */
describe('Getting Started: Connect a real lock', () => {
  it('is the tab next to the sandbox path, which stays where a first visit lands', async () => {
    const { router, user } = renderGuide('/app-1/getting-started');
    await waitFor(() => expect(router.state.location.pathname).toBe('/app-1/getting-started/backend'));
    const tabs = screen.getAllByRole('tab');
    expect(tabs.slice(0, 2).map((t) => t.textContent)).toEqual(['Your backend', 'Connect a real lock']);
    expect(tabs[0]).toHaveAttribute('aria-selected', 'true');

    await user.click(tabs[1]!);
    await waitFor(() => expect(router.state.location.pathname).toBe('/app-1/getting-started/device'));
    expect(await screen.findByRole('heading', { name: 'Wire a relay to the Raspberry Pi' })).toBeInTheDocument();
  });

  it('walks through wiring, connecting on the lock’s page and running the commands, with links to the lock and to Locks', async () => {
    renderGuide('/app-1/getting-started/device');
    expect(await screen.findByText(/Put a Raspberry Pi and a relay on a real door/)).toBeInTheDocument();
    const first = await screen.findByRole('heading', { name: 'Wire a relay to the Raspberry Pi' });
    const steps = within(first.closest('ol')!).getAllByRole('heading');
    expect(steps.map((h) => h.textContent)).toEqual([
      'Wire a relay to the Raspberry Pi',
      'Open a lock’s page and connect a device',
      'Run the commands on the Pi',
    ]);
    expect(await screen.findByRole('link', { name: 'Open Front Door' })).toHaveAttribute('href', '/app-1/locks/lock-1');
    expect(screen.getByRole('link', { name: 'Go to Locks' })).toHaveAttribute('href', '/app-1/locks');
    expect(
      screen.getByRole('region', { name: 'Install Node.js 22 and the device package: shell command' }).textContent,
    ).toMatch(/sudo npm install -g @latchkey\/device$/);
    expect(screen.getByText(/--actuator virtual/)).toBeInTheDocument();
  });

  it('without a lock, says to add one first, with the link to Locks', async () => {
    renderGuide('/app-1/getting-started/device', []);
    expect(await screen.findByText(/This application has no lock yet/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to Locks' })).toHaveAttribute('href', '/app-1/locks');
    expect(screen.queryByRole('link', { name: /^Open / })).toBeNull();
  });
});
