import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { PlatformSetup } from '@latchkey/contract';
import { Outlet } from 'react-router';
import {
  GettingStartedIndex,
  GettingStartedPage,
} from '../features/applications/getting-started/getting-started-page';
import { DeviceGuide } from '../features/locks/guide/device-guide';
import { UnlockGuide } from '../features/locks/guide/unlock-guide';
import { sampleLock } from '../features/locks/test-fixtures';
import { storeSignIn } from '../lib/session';
import {
  json,
  makeJwt,
  nowSeconds,
  renderRoute,
  sampleApplication,
  sampleConfig,
  stubFetch,
} from '../test/helpers';

const APP = '/api/platform/application/app-1';

/** GET /platform/setup: PUBLIC_URL left at its default, a loopback address, on a machine with one LAN address. */
const LOOPBACK_SETUP: PlatformSetup = {
  publicUrl: 'http://localhost:3000',
  publicUrlIsLoopback: true,
  brokerUrl: 'mqtts://localhost:8883',
  brokerUrlIsLoopback: true,
  networkAddresses: ['192.168.1.20'],
  devicePackage: { url: 'http://localhost:3000/downloads/latchkey-device.tgz', version: '0.4.2' },
};

function renderGuide(initial: string, locks = [sampleLock()], platform: PlatformSetup = LOOPBACK_SETUP) {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  stubFetch((call) => {
    if (call.url === '/api/config') return json(sampleConfig);
    if (call.url === '/api/platform/setup') return json(platform);
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
    expect(
      await screen.findByRole('heading', { name: 'Wire a relay to the Raspberry Pi' }),
    ).toBeInTheDocument();
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
    expect(await screen.findByRole('link', { name: 'Open Front Door' })).toHaveAttribute(
      'href',
      '/app-1/locks/lock-1',
    );
    expect(screen.getByRole('link', { name: 'Go to Locks' })).toHaveAttribute('href', '/app-1/locks');
    expect(
      screen.getByRole('region', { name: 'Install Node.js 22 and the device package: shell command' })
        .textContent,
    ).toMatch(/\nsudo npm install -g http:\/\/localhost:3000\/downloads\/latchkey-device\.tgz$/);
    expect(
      screen.getByText('The device package latchkey-device 0.4.2, served by this platform.'),
    ).toBeInTheDocument();
    expect(screen.getByText(/--actuator virtual/)).toBeInTheDocument();
  });

  it('starts by saying when PUBLIC_URL is a loopback address a Pi cannot reach, with the command for this machine’s address', async () => {
    const { unmount } = renderGuide('/app-1/getting-started/device');
    const notice = (
      await screen.findByText('A Raspberry Pi or a phone cannot reach http://localhost:3000')
    ).closest<HTMLElement>('[role="alert"]')!;
    const first = screen.getByRole('heading', { name: 'Wire a relay to the Raspberry Pi' });
    // Before the steps, so it is read first.
    expect(notice.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(
      within(notice).getByRole('region', { name: 'Restart with PUBLIC_URL: http://192.168.1.20:3000' }),
    ).toHaveTextContent('PUBLIC_URL=http://192.168.1.20:3000 scripts/latchkey start');
    unmount();

    renderGuide('/app-1/getting-started/device', [sampleLock()], {
      ...LOOPBACK_SETUP,
      publicUrl: 'https://doors.example.com',
      publicUrlIsLoopback: false,
      brokerUrl: 'mqtts://doors.example.com:8883',
      brokerUrlIsLoopback: false,
    });
    expect(
      await screen.findByRole('heading', { name: 'Wire a relay to the Raspberry Pi' }),
    ).toBeInTheDocument();
    expect(await screen.findByText(/latchkey-device 0\.4\.2/)).toBeInTheDocument();
    expect(screen.queryByText(/cannot reach/)).toBeNull();
  });

  it('without a lock, says to add one first, with the link to Locks', async () => {
    renderGuide('/app-1/getting-started/device', []);
    expect(await screen.findByText(/This application has no lock yet/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to Locks' })).toHaveAttribute('href', '/app-1/locks');
    expect(screen.queryByRole('link', { name: /^Open / })).toBeNull();
  });
});
