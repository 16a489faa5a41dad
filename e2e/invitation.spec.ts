import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { expectAccessible, login, registerViaApi, screenshot, uniqueEmail } from './support';

/** The service's outbox (embedded mode: no SMTP_URL), in the data directory playwright.config.ts gives it. */
const outbox = path.resolve(import.meta.dirname, '.tmp', String(process.env.E2E_PORT ?? 3100), 'data', 'outbox');

async function invitationLink(to: string): Promise<string> {
  let link: string | undefined;
  await expect
    .poll(() => {
      const files = fs.existsSync(outbox) ? fs.readdirSync(outbox).filter((f) => f.endsWith('.json')) : [];
      const mail = files.map((f) => JSON.parse(fs.readFileSync(path.join(outbox, f), 'utf8')) as { to: string; text: string }).find((m) => m.to === to);
      link = mail?.text.match(/https?:\/\/\S+\/accept-invite#\S+/)?.[0];
      return link;
    })
    .toBeTruthy();
  return link!;
}

/**
 * Account creation from an invitation: an existing user invites a colleague; the emailed link
 * opens the accept-invite screen, which signs in with the one-time code, makes them choose a password,
 * and lands on /start. The code works once; the new password works from then on.
 */
test('an invited colleague follows the emailed link, chooses a password and signs in', async ({ page, request }) => {
  const inviter = uniqueEmail('inviter');
  const invitee = uniqueEmail('invitee');
  const { authToken } = await registerViaApi(request, inviter, 'Inviter');
  const invite = await request.post('/api/account/invite', { headers: { authorization: `Bearer ${authToken}` }, data: { email: invitee } });
  expect(invite.status()).toBeLessThan(300);

  const link = new URL(await invitationLink(invitee));
  const linkParams = new URLSearchParams(link.hash.slice(1));
  expect(linkParams.get('email')).toBe(invitee);
  await page.goto(`${link.pathname}${link.hash}`);
  await expect(page.getByText(`Choose a password for ${invitee} to finish creating your account.`)).toBeVisible();
  await expectAccessible(page, 'accept invite');
  await screenshot(page, 'accept-invite');

  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('new-secret');
  await page.getByRole('textbox', { name: 'Repeat password' }).fill('not-the-same');
  await page.getByRole('button', { name: 'Choose password' }).click();
  await expect(page.getByText('Passwords are not matching')).toBeVisible();
  await page.getByRole('textbox', { name: 'Repeat password' }).fill('new-secret');
  await page.getByRole('button', { name: 'Choose password' }).click();
  await expect(page).toHaveURL(/\/start$/);

  // The code was one-time: it no longer signs in; the chosen password does.
  const code = linkParams.get('code')!;
  expect((await request.post('/api/auth/token', { data: { email: invitee, password: code } })).status()).toBe(401);
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();

  // Following the spent link again says so, rather than blaming the email and password.
  await page.goto(`${link.pathname}${link.hash}`);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('another-secret');
  await page.getByRole('textbox', { name: 'Repeat password' }).fill('another-secret');
  await page.getByRole('button', { name: 'Choose password' }).click();
  const expired = page.getByRole('alertdialog', { name: 'Invitation link expired' });
  await expect(expired.getByText('This activation link has expired. Please ask the admin to reshare the lock.')).toBeVisible();
  await expired.getByRole('button', { name: 'Done' }).click();

  await login(page, invitee, 'new-secret');
});
