import type { DeviceCreated, DeviceStatus, PlatformSetup } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import {
  json,
  makeJwt,
  noContent,
  nowSeconds,
  renderRoute,
  stubFetch,
  type Call,
} from '../../../test/helpers';
import { LockPage } from '../lock/lock-page';
import { deviceSummary, eventStream, LOCKS, sampleDevice, sampleLock } from '../test-fixtures';

const LOCK = `${LOCKS}/lock-1`;
const DEVICE = `${LOCK}/device`;
const CODE = 'K7Q2-XF9P-LM4D';
const SETUP = '/api/platform/setup';
/** What GET /platform/setup answers by default: this portal's origin as PUBLIC_URL, reachable, and the package. */
const reachable = (): PlatformSetup => ({
  publicUrl: window.location.origin,
  publicUrlIsLoopback: false,
  brokerUrl: 'mqtts://portal.example:8883',
  brokerUrlIsLoopback: false,
  networkAddresses: ['192.168.1.20'],
  devicePackage: { url: `${window.location.origin}/downloads/latchkey-device.tgz`, version: '0.4.2' },
});

/**
 * The lock page with its Device card, against a fake API whose device the test sets: `device` is what
 * GET …/device answers (null: 404, a sandbox lock); POST makes a code and a device waiting for it.
 */
function setup(
  options: {
    device?: DeviceStatus | null;
    platform?: PlatformSetup;
    answer?: (call: Call) => Response | undefined;
  } = {},
) {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  const api = { device: options.device ?? null };
  const stream = eventStream();
  const calls = stubFetch((call) => {
    const own = options.answer?.(call);
    if (own) return own;
    const path = call.url.split('?')[0];
    if (path === `${LOCKS}/events`) return stream.response;
    if (path === SETUP) return json(options.platform ?? reachable());
    if (path === LOCK && call.method === 'GET')
      return json(sampleLock({ device: api.device && deviceSummary(api.device) }));
    if (path === DEVICE && call.method === 'GET')
      return api.device ? json(api.device) : json({ code: 404, message: 'This lock has no device' }, 404);
    if (path === DEVICE && call.method === 'POST') {
      const created: DeviceCreated = {
        deviceId: 'dev-2',
        provisioningCode: CODE,
        expiresAt: nowSeconds() + 900,
      };
      api.device = sampleDevice({
        deviceId: 'dev-2',
        provisioned: false,
        connected: false,
        lastSeen: null,
        firmware: null,
        locked: null,
        codeExpiresAt: created.expiresAt,
      });
      return json(created, 201);
    }
    if (path === DEVICE && call.method === 'DELETE') {
      api.device = null;
      return noContent();
    }
    if (path === `${LOCK}/user`) return json([]);
    if (path === `${LOCK}/log`) return json({ items: [], nextCursor: null });
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<LockPage />, { path: '/:appId/locks/:lockId', initial: '/app-1/locks/lock-1' });
  return { api, calls, stream, u: userEvent.setup() };
}

const card = () => screen.findByRole('region', { name: 'Device' });
const code = (name: string) => screen.getByRole('region', { name: `${name}: shell command` }).textContent;
const posts = (calls: Call[]) => calls.filter((c) => c.method === 'POST' && c.url === DEVICE);

describe('Device card', () => {
  it('virtual → connect → the code with copy, countdown and the Pi’s commands → online once the device used it → unbind after confirming → virtual', async () => {
    const { api, calls, stream, u } = setup();
    let device = await card();
    expect(await within(device).findByText(/This is a virtual \(sandbox\) lock/)).toBeInTheDocument();
    expect(within(device).getByRole('img', { name: 'Virtual (sandbox) lock' })).toBeInTheDocument();

    await u.click(within(device).getByRole('button', { name: 'Connect a device' }));
    expect(await within(device).findByText(CODE)).toBeInTheDocument();
    await u.click(within(device).getByRole('button', { name: 'Copy Provisioning code' }));
    expect(await navigator.clipboard.readText()).toBe(CODE);
    expect(within(device).getByText(/Expires in 1[45]:\d\d \(at \d\d:\d\d:\d\d\)/)).toBeInTheDocument();
    expect(code('Install Node.js 22 and the device package')).toContain(
      `sudo npm install -g ${window.location.origin}/downloads/latchkey-device.tgz`,
    );
    expect(
      within(device).getByText('The device package latchkey-device 0.4.2, served by this platform.'),
    ).toBeInTheDocument();
    expect(within(device).queryByText(/cannot reach/)).toBeNull();
    expect(code('Provision the device with the code')).toBe(
      `latchkey-device provision --api ${window.location.origin}/api --code ${CODE}`,
    );
    expect(code('Run the device')).toBe(
      'latchkey-device run --actuator command --unlock-command "gpioset gpiochip0 17=1" --lock-command "gpioset gpiochip0 17=0"',
    );
    expect(within(device).getByText(/run it with --actuator virtual instead/)).toBeInTheDocument();
    expect(within(device).getByRole('img', { name: 'Device not set up yet' })).toBeInTheDocument();
    expect(posts(calls)).toHaveLength(1);

    // The device provisions and connects: the lock's live event says so, and the card reads its status.
    api.device = sampleDevice({ deviceId: 'dev-2', firmware: 'latchkey-device 1.2.0', locked: false });
    stream.push('lock', sampleLock({ device: deviceSummary(api.device) }));
    expect(await within(device).findByRole('img', { name: 'Device online' })).toBeInTheDocument();
    expect(within(device).queryByText(CODE)).toBeNull();
    expect(within(device).queryByRole('region', { name: /Provision the device/ })).toBeNull();
    const term = (name: string) => within(device).getByText(name).nextElementSibling;
    expect(term('Connection')).toHaveTextContent('Online');
    expect(term('Last seen')).toHaveTextContent('now');
    expect(term('Firmware')).toHaveTextContent('latchkey-device 1.2.0');
    expect(term('Lock state')).toHaveTextContent('Unlocked');
    expect(term('Device ID')).toHaveTextContent('dev-2');

    await u.click(within(device).getByRole('button', { name: 'Unbind device' }));
    let confirm = await screen.findByRole('dialog', { name: 'Unbind this device?' });
    expect(confirm).toHaveTextContent(
      'The lock becomes a sandbox (virtual) lock again, and the device dev-2 is cut off at once',
    );
    await u.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(calls.filter((c) => c.method === 'DELETE')).toHaveLength(0);
    // (Until the dialog has gone, the page behind it is hidden from the accessibility tree.)
    await u.click(await within(device).findByRole('button', { name: 'Unbind device' }));
    confirm = await screen.findByRole('dialog', { name: 'Unbind this device?' });
    await u.click(within(confirm).getByRole('button', { name: 'Unbind device' }));
    device = await card();
    expect(await within(device).findByText(/This is a virtual \(sandbox\) lock/)).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual([DEVICE]);
    await waitFor(() =>
      expect(screen.getAllByRole('status').map((s) => s.textContent)).toContain(
        'Device unbound: this is a sandbox lock again',
      ),
    );
  }, 20_000);

  it('a failed POST shows the server’s message, and the card stays usable: the next try works', async () => {
    let refuse = true;
    const { calls, u } = setup({
      answer: (call) =>
        refuse && call.method === 'POST' && call.url === DEVICE
          ? json({ code: 503, message: 'Devices are not available right now' }, 503)
          : undefined,
    });
    const device = await card();
    await u.click(await within(device).findByRole('button', { name: 'Connect a device' }));
    const failed = await screen.findByRole('alertdialog', { name: 'Failed' });
    expect(failed).toHaveTextContent('Devices are not available right now');
    await u.click(within(failed).getByRole('button', { name: 'Done' }));
    expect(within(device).getByText(/This is a virtual \(sandbox\) lock/)).toBeInTheDocument();

    refuse = false;
    await u.click(await within(device).findByRole('button', { name: 'Connect a device' }));
    expect(await within(device).findByText(CODE)).toBeInTheDocument();
    expect(posts(calls)).toHaveLength(2);
  });

  it('a new code for a lock whose device is set up replaces it only after confirming', async () => {
    const { calls, u } = setup({ device: sampleDevice() });
    const device = await card();
    await u.click(await within(device).findByRole('button', { name: 'Connect a new device' }));
    let confirm = await screen.findByRole('dialog', { name: 'Replace this lock’s device?' });
    expect(confirm).toHaveTextContent('the device dev-1 is cut off at once');
    await u.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(posts(calls)).toHaveLength(0);
    expect(await within(device).findByRole('img', { name: 'Device online' })).toBeInTheDocument();

    await u.click(within(device).getByRole('button', { name: 'Connect a new device' }));
    confirm = await screen.findByRole('dialog', { name: 'Replace this lock’s device?' });
    await u.click(within(confirm).getByRole('button', { name: 'Replace device' }));
    expect(await within(device).findByText(CODE)).toBeInTheDocument();
    expect(posts(calls)).toHaveLength(1);
  });

  it('a code made earlier (not shown again) says until when it waits, and offers a new one without asking', async () => {
    const { calls, u } = setup({
      device: sampleDevice({
        provisioned: false,
        connected: false,
        lastSeen: null,
        firmware: null,
        locked: null,
        codeExpiresAt: nowSeconds() + 600,
      }),
    });
    const device = await card();
    expect(
      await within(device).findByText(/A code waits for the device until \d\d:\d\d:\d\d/),
    ).toBeInTheDocument();
    await u.click(within(device).getByRole('button', { name: 'Make a new code' }));
    expect(await within(device).findByText(CODE)).toBeInTheDocument();
    expect(screen.queryByRole('dialog', { name: 'Replace this lock’s device?' })).toBeNull();
    expect(posts(calls)).toHaveLength(1);
  });

  it('with no live event, reads the status every 10 s while the device is not online, and stops once it is', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const { api, calls } = setup({
        device: sampleDevice({ connected: false, lastSeen: nowSeconds() - 3600 }),
      });
      const device = await card();
      expect(await within(device).findByRole('img', { name: 'Device offline' })).toBeInTheDocument();
      expect(within(device).getByText('Last seen').nextElementSibling).toHaveTextContent('1 hour ago');
      const reads = () => calls.filter((c) => c.method === 'GET' && c.url === DEVICE).length;
      const before = reads();

      api.device = sampleDevice();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await within(device).findByRole('img', { name: 'Device online' })).toBeInTheDocument();
      expect(reads()).toBe(before + 1);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(reads()).toBe(before + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a virtual lock’s page does not ask for its device (no 404 on every visit), and does once a code is made', async () => {
    const { calls, u } = setup();
    const device = await card();
    expect(await within(device).findByText(/This is a virtual \(sandbox\) lock/)).toBeInTheDocument();
    const reads = () => calls.filter((c) => c.method === 'GET' && c.url === DEVICE).length;
    expect(reads()).toBe(0);
    await u.click(within(device).getByRole('button', { name: 'Connect a device' }));
    expect(await within(device).findByText(CODE)).toBeInTheDocument();
    await waitFor(() => expect(reads()).toBeGreaterThan(0));
  });

  it('with a loopback PUBLIC_URL, says beside the commands that the Pi cannot reach it and how to restart with this machine’s addresses', async () => {
    const { u } = setup({
      platform: {
        ...reachable(),
        publicUrl: 'http://localhost:3000',
        publicUrlIsLoopback: true,
        brokerUrl: 'mqtts://localhost:8883',
        brokerUrlIsLoopback: true,
        networkAddresses: ['192.168.1.20', 'fd00::5'],
        devicePackage: { url: 'http://localhost:3000/downloads/latchkey-device.tgz', version: '0.4.2' },
      },
    });
    const device = await card();
    await u.click(await within(device).findByRole('button', { name: 'Connect a device' }));
    const notice = (
      await within(device).findByText('A Raspberry Pi or a phone cannot reach http://localhost:3000')
    ).closest<HTMLElement>('[role="alert"]')!;
    expect(notice).toHaveTextContent(
      'PUBLIC_URL is http://localhost:3000, an address only this computer can reach',
    );
    expect(
      within(notice).getByRole('region', { name: 'Restart with PUBLIC_URL: http://192.168.1.20:3000' }),
    ).toHaveTextContent('PUBLIC_URL=http://192.168.1.20:3000 scripts/latchkey start');
    expect(
      within(notice).getByRole('region', { name: 'Restart with PUBLIC_URL: http://[fd00::5]:3000' }),
    ).toBeInTheDocument();
    // The commands are PUBLIC_URL's, as the device will be given them.
    expect(code('Provision the device with the code')).toBe(
      `latchkey-device provision --api http://localhost:3000/api --code ${CODE}`,
    );
    expect(code('Install Node.js 22 and the device package')).toContain(
      'sudo npm install -g http://localhost:3000/downloads/latchkey-device.tgz',
    );
  });

  it('says how to build the device package when the platform serves none', async () => {
    const { u } = setup({ platform: { ...reachable(), devicePackage: null } });
    const device = await card();
    await u.click(await within(device).findByRole('button', { name: 'Connect a device' }));
    expect(
      await within(device).findByText(/serves no device package yet: run npm run build/),
    ).toBeInTheDocument();
  });
});
