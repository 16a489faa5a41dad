import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test, type Page } from '@playwright/test';
import { baseURL } from '../playwright.config';
import { PASSWORD, createAppViaApi, expectAccessible, screenshot, uniqueEmail } from './support';
import { keyCode } from './outbox-mail';

const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, '../examples/unlock-from-backend.mjs');
const ISSUER = 'https://auth.sandbox-journey.example.com';
const KID = 'backend-key-1';

/** The value a line `NAME=value \` of the guide's command gives NAME. */
const commandValue = (command: string, name: string) =>
  command.match(new RegExp(`^${name}=(\\S+) \\\\$`, 'm'))?.[1] ?? '';

async function signUp(page: Page, email: string) {
  await page.goto('/register');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Display name').fill('Sandbox Dev');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
  await page.getByLabel('Repeat password').fill(PASSWORD);
  await page.getByRole('checkbox', { name: /I agree to the privacy policy/ }).check();
  await page.getByRole('button', { name: 'Register' }).click();
  await expect(page).toHaveURL(/\/start$/);
}

/**
 * The sandbox as a developer walks it: sign up, create an application, upload a key and an issuer, follow
 * Getting Started's "Your backend" guide (share the Front Door with a user, run the example script with the
 * values it shows), see the unlock arrive live on the lock page, unlock from the browser too, and find the
 * branded invitation in the Outbox; revoking takes effect at once.
 */
test('from sign-up to a Front Door unlocked by a token the developer’s own backend signed', async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  const email = uniqueEmail('sandbox');
  const doorUser = uniqueEmail('door.user');
  await signUp(page, email);
  const token = await page.evaluate(() => localStorage.getItem('token'));
  const appId = await createAppViaApi(request, token!, 'Sandbox Doors');

  // The developer's key pair: the public half uploaded here, the private half stays on "their backend".
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyFile = path.resolve(import.meta.dirname, `.tmp/sandbox-key-${process.pid}.json`);
  fs.mkdirSync(path.dirname(keyFile), { recursive: true });
  fs.writeFileSync(keyFile, JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: KID }));
  await page.goto(`/${appId}/overview`);
  const authCard = page.getByRole('region', { name: 'Authentication' });
  await authCard.getByRole('button', { name: 'Add Auth Key' }).click();
  await page
    .getByRole('dialog', { name: 'Add Auth Key' })
    .getByLabel('Public key (JWK)')
    .fill(JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid: KID }));
  await page.getByRole('dialog', { name: 'Add Auth Key' }).getByRole('button', { name: 'Save' }).click();
  await expect(authCard.getByRole('button', { name: `Edit key ${KID}` })).toBeVisible();
  await authCard.getByRole('button', { name: 'Add Auth Domain' }).click();
  await page.getByLabel('Auth domain URL').fill(ISSUER);
  await page.getByRole('dialog').getByRole('button', { name: 'Add' }).click();
  await expect(authCard.getByText(ISSUER)).toBeVisible();

  // Getting Started → Your backend: the command is filled in with this application's values.
  await page
    .getByRole('navigation', { name: 'Application sections' })
    .getByRole('link', { name: 'Getting Started' })
    .click();
  await page.getByRole('tab', { name: 'Your backend' }).click();
  await expect(page).toHaveURL(new RegExp(`/${appId}/getting-started/backend$`));
  const code = page.getByRole('region', { name: /Run the example script/ });
  await expect(code).toContainText('LOCK_ID=');
  const command = await code.innerText();
  expect(commandValue(command, 'ISSUER')).toBe(ISSUER);
  expect(commandValue(command, 'KEY_ID')).toBe(KID);
  expect(commandValue(command, 'LATCHKEY_API')).toBe(`${baseURL}/api`);
  // In a folder of its own, with the repository's example fetched from this portal.
  expect(command).toContain('mkdir -p latchkey-unlock && cd latchkey-unlock &&');
  expect(command).toContain('node unlock-from-backend.mjs');
  const scriptUrl = /^curl -fsSLo unlock-from-backend\.mjs '?([^' ]+)'? &&$/m.exec(command)?.[1] ?? '';
  const served = await page.request.get(scriptUrl);
  expect(served.status()).toBe(200);
  expect(await served.text()).toBe(fs.readFileSync(SCRIPT, 'utf8'));
  await expectAccessible(page, 'getting started: your backend');

  // Step 2: share the Front Door with the user the backend signs for (an email with no user yet).
  await page.getByRole('link', { name: 'Open Front Door' }).first().click();
  await expect(page.getByRole('heading', { name: 'Front Door', level: 1 })).toBeVisible();
  expect(page.url()).toContain(commandValue(command, 'LOCK_ID'));
  await page.getByRole('button', { name: 'Share lock' }).click();
  const share = page.getByRole('dialog', { name: 'Share lock' });
  await share.getByRole('textbox', { name: 'Email' }).fill(doorUser);
  await share.getByRole('switch', { name: 'Only on some days and hours' }).check();
  for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])
    await share.getByRole('checkbox', { name: day }).uncheck();
  await expect(share.getByText('Select minimum 1 day')).toBeVisible();
  await expect(share.getByRole('button', { name: 'Share lock' })).toBeDisabled();
  await share.getByRole('switch', { name: 'Only on some days and hours' }).uncheck();
  await share.getByRole('button', { name: 'Share lock' }).click();
  // The one non-blocking notice every save gives; nothing to dismiss.
  await expect(page.getByRole('status').filter({ hasText: `The lock has been shared with ${doorUser}.` })).toBeVisible();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  const shares = page.getByRole('region', { name: 'Shared with' });
  await expect(shares.getByRole('row', { name: new RegExp(doorUser) })).toContainText('Invited');
  await expect(page.getByText('Live', { exact: true })).toBeVisible();
  await expectAccessible(page, 'lock page');

  // Step 3: run the example script as the developer would, with the guide's values; the page shows it live.
  const env = {
    PATH: process.env.PATH ?? '',
    LATCHKEY_API: `${baseURL}/api`,
    KEY_FILE: keyFile,
    KEY_ID: KID,
    ISSUER,
    AUDIENCE: commandValue(command, 'AUDIENCE'),
    LOCK_ID: commandValue(command, 'LOCK_ID'),
    USER_EMAIL: doorUser,
  };
  const { stdout } = await run(process.execPath, [SCRIPT], { env, timeout: 20_000 });
  expect(stdout).toContain('Unlocked Front Door');
  const activity = page.getByRole('region', { name: 'Activity' });
  await expect(
    activity.getByRole('row', { name: new RegExp(`Unlock.*${doorUser}.*Accepted`) }),
  ).toBeVisible();
  await expect(page.getByText(/^Unlocked · locks in \d+ s$/)).toBeVisible();
  // The share is active now that the user has signed in with the backend's token.
  await expect(shares.getByRole('row', { name: new RegExp(doorUser) })).toContainText('Active');

  // The Unlock button signs its own operation in this browser. Its new key needs a second factor:
  // the code emailed to the account, typed into the dialog, signed by the key.
  await page.getByRole('button', { name: 'Unlock' }).click();
  const codeDialog = page.getByRole('dialog', { name: 'Confirm this browser’s key' });
  await codeDialog.getByLabel('Code from the email').fill(await keyCode(email));
  await expectAccessible(page, 'key code dialog');
  await codeDialog.getByRole('button', { name: 'Confirm' }).click();
  await expect(codeDialog).toBeHidden();
  await expect(activity.getByRole('row', { name: new RegExp(`Unlock.*${email}.*Accepted`) })).toBeVisible();
  await screenshot(page, 'lock-page');

  // The invitation is in the Outbox, rendered with the application's branding.
  await page
    .getByRole('navigation', { name: 'Application sections' })
    .getByRole('link', { name: 'Outbox' })
    .click();
  await page.getByRole('button', { name: new RegExp(`Show email to ${doorUser}`) }).click();
  const email1 = page.frameLocator('iframe[title^="Email:"]');
  await expect(email1.getByText('Sandbox Doors').first()).toBeVisible();
  await expect(email1.getByRole('heading', { name: 'You have a new key' })).toBeVisible();
  await expect(email1.locator('body')).toContainText('Front Door');
  // The frame is as tall as the email, with no empty grey under it.
  const emailHeight = await email1.locator('body').evaluate((b) => b.getBoundingClientRect().height);
  await expect.poll(async () => (await page.locator('iframe[title^="Email:"]').boundingBox())!.height).toBeLessThanOrEqual(Math.ceil(emailHeight) + 1);
  await expectAccessible(page, 'outbox');
  await screenshot(page, 'outbox');
  // On a phone the 624 px email is scaled to the width there is, like the overview's preview, not scrolled sideways.
  const desktop = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 844 });
  const phoneFrame = page.locator('iframe[title^="Email:"]');
  await expect.poll(async () => { const box = (await phoneFrame.boundingBox())!; return box.x + box.width; }).toBeLessThanOrEqual(375);
  expect((await phoneFrame.boundingBox())!.width).toBeGreaterThan(300);
  await expectAccessible(page, 'outbox (phone)');
  await page.setViewportSize(desktop);

  // Revoking takes effect at once: the script is refused now.
  await page.goBack();
  await page.getByRole('link', { name: 'Locks', exact: true }).click();
  await page.getByRole('link', { name: 'Open Front Door' }).click();
  await expectAccessible(page, 'lock page again');
  await shares.getByRole('button', { name: `Revoke access of ${doorUser}` }).click();
  await page
    .getByRole('dialog', { name: 'Revoke this share?' })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(shares.getByText(doorUser)).toHaveCount(0);
  const refused = await run(process.execPath, [SCRIPT], { env, timeout: 20_000 }).catch(
    (e: { code: number; stderr: string }) => e,
  );
  expect(refused).toMatchObject({ code: 1 });
  await expect(activity.getByRole('row', { name: /Revoke/ })).toBeVisible();

  // The lock list shows every lock with its state; axe on it too.
  await page.getByRole('link', { name: 'All locks' }).click();
  await expect(
    page.getByRole('table', { name: 'Locks' }).getByRole('link', { name: 'Open Front Door' }),
  ).toBeVisible();
  await expectAccessible(page, 'locks');
  fs.rmSync(keyFile, { force: true });
});
