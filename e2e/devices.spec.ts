import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { baseURL } from '../playwright.config';
import { keyCode, mailMatch } from './outbox-mail';
import { expectNoWiderThanViewport, settled } from './phone-pages';
import { createAppViaApi, expectAccessible, login, registerViaApi, screenshot, uniqueEmail } from './support';

/** The `latchkey-device` command as a developer runs it, from the repository's source through tsx. */
const CLI = path.resolve(import.meta.dirname, '../packages/device/src/cli.ts');
const ROOT = path.resolve(import.meta.dirname, '..');
/** Seconds the lock stays open: short, so the journey sees it lock again by itself. */
const UNLOCK_TIME = 3;

/** A running `latchkey-device` with everything it has printed so far; each one started is added to `started`. */
interface DeviceProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startDevice(started: DeviceProcess[], ...args: string[]): DeviceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const device = { child, output: () => output, exited };
  started.push(device);
  return device;
}

/** How many times the device has said it lost the broker and will try again. */
const retries = (device: DeviceProcess) => device.output().match(/Not connected to mqtts:\/\/[^;]+; trying again/g)?.length ?? 0;

/**
 * A real lock on the page: the owner connects a device from the lock's page, runs the device command with
 * the code the page shows, and watches the card come online with no reload. Unlocking from the page goes
 * through the device, whose state the card follows live: unlocked, then locked again after the unlock time.
 * Unbinding cuts the device off and the lock is virtual again.
 */
test('connect a device from the lock page, see it come online, unlock from the page and see its state change live', async ({ page, request }) => {
  test.setTimeout(150_000);
  const email = uniqueEmail('device.owner');
  const { authToken } = await registerViaApi(request, email, 'Device Owner');
  const headers = { authorization: `Bearer ${authToken}` };
  const appId = await createAppViaApi(request, authToken, 'Device Doors');
  const app = `/api/platform/application/${appId}`;
  const locks = (await (await request.get(`${app}/lock`, { headers })).json()) as { id: string; name: string }[];
  const lock = locks[0]!;
  expect((await request.put(`${app}/lock/${lock.id}`, { headers, data: { settings: { unlockTime: UNLOCK_TIME } } })).status()).toBeLessThan(300);

  await login(page, email);
  // A verified account: the lock page without the verification banner.
  await page.goto((await mailMatch(email, /https?:\/\/\S+\/verify-email#\S+/)).match[0]);
  await expect(page.getByText('Thank you: your email address is verified.')).toBeVisible();
  await page.goto(`/${appId}/locks/${lock.id}`);
  await expect(page.getByRole('heading', { name: lock.name, level: 1 })).toBeVisible();
  const card = page.getByRole('region', { name: 'Device', exact: true });
  await expect(card.getByRole('img', { name: 'Virtual (sandbox) lock' })).toBeVisible();
  // The page is never reloaded from here on: what it shows arrives live.
  await page.evaluate(() => Object.assign(window, { journeyMark: true }));
  const notReloaded = () => page.evaluate(() => 'journeyMark' in window);
  // The lock's state beside its name, as the page's header shows it.
  const headerState = page.locator('main .MuiChip-label').filter({ hasText: /^(Locked|Unlocked)/ }).first();

  // Connect a device: a one-time code and the Raspberry Pi's commands with it.
  await card.getByRole('button', { name: 'Connect a device' }).click();
  await expect(card.getByRole('button', { name: 'Copy Provisioning code' })).toBeVisible();
  const provision = await card.getByRole('region', { name: 'Provision the device with the code: shell command' }).innerText();
  const code = /--code '?([^'\s]+)'?/.exec(provision)?.[1] ?? '';
  expect(code).not.toBe('');
  expect(provision).toContain(`--api ${baseURL}/api`);
  await expect(card).toContainText(code);
  const runCommand = await card.getByRole('region', { name: 'Run the device: shell command' }).innerText();
  expect(runCommand).toContain('latchkey-device run --actuator command');
  // The commands scroll inside their blocks on a phone; the page does not.
  const desktop = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 844 });
  await expectNoWiderThanViewport(page, 'lock page with a provisioning code (phone)');
  await page.setViewportSize(desktop);

  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-journey-device-'));
  const started: DeviceProcess[] = [];
  let device: DeviceProcess | undefined;
  try {
    // The commands as the page gives them, with a state directory of its own and the relay left out.
    const provisioning = startDevice(started, 'provision', '--api', `${baseURL}/api`, '--code', code, '--dir', dir);
    expect(await provisioning.exited, provisioning.output()).toBe(0);
    expect(provisioning.output()).toContain(`for lock ${lock.id}`);
    device = startDevice(started, 'run', '--dir', dir, '--actuator', 'virtual');

    // Online on the page with no reload; the code is gone, since it has been used.
    await expect(card.getByRole('img', { name: 'Device online' })).toBeVisible({ timeout: 20_000 });
    await expect(card.getByRole('button', { name: 'Copy Provisioning code' })).toHaveCount(0);
    const status = (term: string) => card.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]');
    await expect(status('Connection')).toHaveText('Online');
    await expect(status('Last seen')).not.toHaveText('Never');
    await expect(status('Firmware')).toHaveText(/^latchkey-device \d/);
    await expect(status('Lock state')).toHaveText('Locked');
    await expect(headerState).toHaveText('Locked');
    await settled(page);
    await expectAccessible(page, 'lock page: device online');

    // Unlock from the page: the device decides, and its state on the card follows live.
    await page.getByRole('button', { name: 'Unlock', exact: true }).click();
    const codeDialog = page.getByRole('dialog', { name: 'Confirm this browser’s key' });
    await codeDialog.getByLabel('Code from the email').fill(await keyCode(email));
    await codeDialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(codeDialog).toBeHidden();
    await expect(status('Lock state')).toHaveText('Unlocked');
    await expect(headerState).toHaveText('Unlocked');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    const activity = page.getByRole('region', { name: 'Activity' });
    await expect(activity.getByRole('row', { name: new RegExp(`Unlock.*${email}.*Accepted`) })).toBeVisible();
    await expect.poll(() => device!.output()).toMatch(/: DONE/);
    // The device locks again by itself after the unlock time and says so: the card follows.
    await expect(status('Lock state')).toHaveText('Locked', { timeout: (UNLOCK_TIME + 10) * 1000 });
    await expect(headerState).toHaveText('Locked');
    await screenshot(page, 'device-online');

    // On a phone the card and its status fit the width.
    await page.setViewportSize({ width: 375, height: 844 });
    await settled(page);
    await expectNoWiderThanViewport(page, 'lock page with a device (phone)');
    await page.setViewportSize(desktop);

    // Unbind, after confirming: the lock is virtual again and the device is cut off.
    const connectedBefore = device.output().split('Connected to').length;
    const retriesBefore = retries(device);
    await card.getByRole('button', { name: 'Unbind device' }).click();
    await page.getByRole('dialog', { name: 'Unbind this device?' }).getByRole('button', { name: 'Unbind device' }).click();
    await expect(card.getByRole('img', { name: 'Virtual (sandbox) lock' })).toBeVisible();
    await expect(card.getByRole('button', { name: 'Connect a device' })).toBeVisible();
    expect((await request.get(`${app}/lock/${lock.id}/device`, { headers })).status()).toBe(404);
    // Its connection is closed, and it cannot come back: it keeps trying (an attempt after the drop fails
    // too), and is never connected again.
    await expect.poll(() => device!.output(), { timeout: 20_000 }).toMatch(/Not connected to mqtts:\/\/[^;]+; trying again/);
    await expect.poll(() => retries(device!) - retriesBefore, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    expect(device.output().split('Connected to').length, device.output()).toBe(connectedBefore);
    expect(await notReloaded()).toBe(true);
  } finally {
    for (const { child, exited } of started) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
});
