import { expect, test } from '@playwright/test';
import { expectAccessible, login, registerViaApi, uniqueEmail } from './support';

/**
 * Sign out everywhere: signed in in two browsers, the user signs out everywhere in one; that
 * one goes to login, and the other's session is over too — its next page load ends at login.
 */
test('Sign out everywhere in the user menu ends the sessions of every browser', async ({ browser, request }) => {
  const email = uniqueEmail('everywhere');
  await registerViaApi(request, email, 'Everywhere');
  const office = await browser.newContext();
  const home = await browser.newContext();
  try {
    const here = await office.newPage();
    const there = await home.newPage();
    await login(here, email);
    await login(there, email);

    await here.getByRole('button', { name: 'Account menu' }).click();
    const item = here.getByRole('menuitem', { name: 'Sign out everywhere' });
    await expect(item).toBeVisible();
    await expectAccessible(here, 'user menu');
    await item.click();
    await expect(here).toHaveURL(/\/login$/);

    // The other browser still holds its tokens, but the server has ended the session behind them.
    await there.reload();
    await expect(there).toHaveURL(/\/login$/);
  } finally {
    await office.close();
    await home.close();
  }
});
