import { expect, test } from '@playwright/test';
import { PASSWORD, createAppViaApi, expectAccessible, login, registerViaApi, uniqueEmail } from './support';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** A token whose exp has passed: the guard must notice before calling anything. */
const expiredToken = (email: string) => `${b64({ alg: 'EdDSA' })}.${b64({ sub: 'x', email, sid: 'x', exp: Math.floor(Date.now() / 1000) - 60 })}.c2ln`;

test.describe('error catalogue (the failure dialogs and their texts)', () => {
  test('wrong password shows "Wrong credentials"', async ({ page, request }) => {
    const email = uniqueEmail('wrong');
    await registerViaApi(request, email);
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Login' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Wrong credentials' });
    await expect(dialog).toBeVisible();
    await expectAccessible(page, 'login error dialog');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('registering an existing account shows "Account already exists"', async ({ page, request }) => {
    const email = uniqueEmail('exists');
    await registerViaApi(request, email);
    await page.goto('/register');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Display name').fill('Again');
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat password').fill(PASSWORD);
    await page.getByRole('checkbox', { name: /I agree to the privacy policy/ }).check();
    await page.getByRole('button', { name: 'Register' }).click();
    await expect(page.getByRole('alertdialog', { name: 'Account already exists' })).toBeVisible();
  });

  test('validation messages of the contract on the register screen', async ({ page }) => {
    await page.goto('/register');
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill('abc');
    await page.getByLabel('Repeat password').fill('abcd');
    await page.getByLabel('Display name').click();
    await expect(page.getByText('Invalid email address')).toBeVisible();
    await expect(page.getByText('Needs to be at least 5 characters')).toBeVisible();
    await expect(page.getByText('Passwords are not matching')).toBeVisible();
  });
});

test.describe('guard and refresh', () => {
  test('without a token, protected routes go to /login', async ({ page }) => {
    await page.goto('/start');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('an expired token is refreshed with the refresh token', async ({ page }) => {
    const email = uniqueEmail('refresh');
    await page.goto('/register');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Display name').fill('Refresher');
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat password').fill(PASSWORD);
    await page.getByRole('checkbox', { name: /I agree to the privacy policy/ }).check();
    await page.getByRole('button', { name: 'Register' }).click();
    await expect(page).toHaveURL(/\/start$/);
    const expired = expiredToken(email);
    await page.evaluate((t) => localStorage.setItem('token', t), expired);
    const refreshed = page.waitForResponse((r) => r.url().includes('/api/auth/token/refresh') && r.status() === 200);
    await page.goto('/start');
    await refreshed;
    await expect(page).toHaveURL(/\/start$/);
    await expect(page.getByRole('heading', { name: 'My Applications' })).toBeVisible();
    expect(await page.evaluate(() => localStorage.getItem('token'))).not.toBe(expired);
  });

  test('a bad refresh token logs out', async ({ page, request }) => {
    const email = uniqueEmail('badrefresh');
    await registerViaApi(request, email);
    await login(page, email);
    await page.evaluate((t) => {
      localStorage.setItem('token', t);
      localStorage.setItem('refreshToken', 'garbage');
    }, expiredToken(email));
    await page.goto('/start');
    await expect(page).toHaveURL(/\/login$/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
  });

  test('pages load without console warnings or errors', async ({ page, request }) => {
    const noise: string[] = [];
    // Playwright runs its own scripts in every frame; in the email preview, sandboxed without scripts on
    // purpose, Chromium refuses them and says so (microsoft/playwright#33343). No browser of a user does that.
    // The portal's preview is a srcdoc document; the preview's own URL is framed too.
    const harness = /^Blocked script execution in '(about:srcdoc|[^']*\/api\/email\/preview\/[^']*)' because the document's frame is sandboxed/;
    page.on('console', (m) => {
      if ((m.type() === 'warning' || m.type() === 'error') && !harness.test(m.text())) noise.push(`${m.type()}: ${m.text()}`);
    });
    const email = uniqueEmail('quiet');
    const { authToken } = await registerViaApi(request, email);
    const appId = await createAppViaApi(request, authToken, 'Quiet Doors');
    await login(page, email);
    await page.goto(`/${appId}/overview`);
    await expect(page.getByRole('heading', { name: 'Quiet Doors' })).toBeVisible();
    // The whole overview, email preview included.
    await page.getByTitle('Email preview').scrollIntoViewIfNeeded();
    await expect(page.frameLocator('iframe[title="Email preview"]').getByText('You have a new key')).toBeVisible();
    await page.goto('/start');
    await expect(page.getByRole('heading', { name: 'My Applications' })).toBeVisible();
    expect(noise).toEqual([]);
  });

  test('unknown paths show the not-found page', async ({ page, request }) => {
    const email = uniqueEmail('lost');
    await registerViaApi(request, email);
    await login(page, email);
    await page.goto('/this/does/not/exist');
    await expect(page.getByText('Page not found')).toBeVisible();
    await expectAccessible(page, 'not found');
  });
});

test.describe('an application that cannot be loaded', () => {
  test('one that is not there says so, offers no retry, and leads back to My Applications', async ({ page, request }) => {
    const email = uniqueEmail('missing');
    await registerViaApi(request, email);
    await login(page, email);
    await page.goto('/00000000-0000-4000-8000-000000000000/overview');
    await expect(page.getByRole('alert')).toHaveText('Application not found');
    await expect(page.getByRole('button', { name: 'Try again' })).toHaveCount(0);
    await expect(page.getByRole('navigation', { name: 'Application sections' })).toHaveCount(0);
    await expectAccessible(page, 'application not found');
    await page.getByRole('link', { name: 'Go to My Applications' }).click();
    await expect(page).toHaveURL(/\/start$/);
  });

  test('one that failed to arrive can be loaded again without leaving the page', async ({ page, request }) => {
    const email = uniqueEmail('offline');
    const { authToken } = await registerViaApi(request, email);
    const appId = await createAppViaApi(request, authToken, 'Flaky Doors');
    await login(page, email);
    const appUrl = `**/api/platform/application/${appId}`;
    await page.route(appUrl, (route) => route.abort('internetdisconnected'));
    await page.goto(`/${appId}/overview`);
    await expect(page.getByRole('alert')).toBeVisible();
    await page.unroute(appUrl);
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect(page.getByRole('heading', { name: 'Flaky Doors' })).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Application sections' })).toBeVisible();
  });
});
