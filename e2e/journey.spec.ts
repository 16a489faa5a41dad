import { expect, test } from '@playwright/test';
import { PASSWORD, createAppViaApi, expectAccessible, login, makePng, publicJwk, registerViaApi, screenshot, uniqueEmail, expectNotice } from './support';

/**
 * The whole product as one user walks it: register → log in → wizard → overview edits → keys
 * and domains → owners with a second user → logo upload → preview follows colours → remove → logout.
 */
test('register, build an application, manage it, remove it, log out', async ({ page, request }) => {
  test.setTimeout(180_000);
  const email = uniqueEmail('journey');
  const second = uniqueEmail('second');
  await registerViaApi(request, second);

  // Register (signs in and lands on /start).
  await page.goto('/register');
  // The page loads lazily: judged and pictured once drawn (a blank register.png otherwise).
  await expect(page.getByRole('heading', { name: 'Create an account' })).toBeVisible();
  await expectAccessible(page, 'register');
  await screenshot(page, 'register');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Display name').fill('Journey User');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
  await page.getByLabel('Repeat password').fill(PASSWORD);
  await page.getByRole('checkbox', { name: /I agree to the privacy policy/ }).check();
  await page.getByRole('button', { name: 'Register' }).click();
  await expect(page).toHaveURL(/\/start$/);

  // Log out and in again.
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole('heading', { name: 'Log in to your account' })).toBeVisible();
  await expectAccessible(page, 'login');
  await screenshot(page, 'login');
  await login(page, email);
  await expect(page.getByRole('heading', { name: 'My Applications' })).toBeVisible();
  await expectAccessible(page, 'start (empty)');

  // Wizard.
  await page.getByRole('link', { name: 'Add Application' }).click();
  const wizard = page.getByRole('region', { name: 'Add Application' });
  await expect(wizard.getByRole('heading', { name: 'Application info' })).toBeVisible();
  const next = wizard.getByRole('button', { name: 'Next' });
  await expect(next).toBeDisabled();
  await wizard.getByLabel('Application name').fill('Front Door');
  await wizard.getByLabel('Company name').fill('Acme Locks');
  await wizard.getByLabel('Mailing address').fill('1 Lock Street');
  await expect(wizard.getByRole('button', { name: 'Back' })).toHaveCount(0);
  // Pictured once Next has turned on and its transition ended (axe waits for it), not half-way.
  await expect(next).toBeEnabled();
  await expectAccessible(page, 'wizard step 1');
  await screenshot(page, 'wizard');
  await next.click();

  await expect(wizard.getByRole('heading', { name: 'Application URLs' })).toBeVisible();
  await wizard.getByLabel('Privacy policy URL').fill('not a url');
  await expect(wizard.getByText('Not a valid url (make sure to add https:// or http://)')).toBeVisible();
  await expect(next).toBeDisabled();
  await wizard.getByLabel('Privacy policy URL').fill('https://acme.example.com/privacy');
  await wizard.getByLabel('Support contact (URL or mailto:)').fill('mailto:help@acme.example.com');
  await next.click();

  await expect(wizard.getByRole('heading', { name: 'Email info' })).toBeVisible();
  await expect(wizard.getByRole('button', { name: 'Back' })).toBeVisible();
  await wizard.getByLabel('Sender email').fill('doors@acme.example.com');
  await wizard.getByLabel('Sender name').fill('Acme Doors');
  await expect(wizard.getByTitle('Email preview')).toBeVisible();
  await next.click();

  await expect(wizard.getByRole('heading', { name: 'Branding' })).toBeVisible();
  await wizard.getByRole('textbox', { name: 'Primary colour', exact: true }).fill('#zz');
  await expect(wizard.getByText('Not a valid Hex colour').first()).toBeVisible();
  await expect(wizard.getByRole('button', { name: 'Finish' })).toBeDisabled();
  await wizard.getByRole('textbox', { name: 'Primary colour', exact: true }).fill('#123456');
  // The live preview follows the colour as it is typed.
  // (Fetched with the owner's token and shown through srcdoc: the preview URL alone opens nothing.)
  await expect(wizard.getByTitle('Email preview')).toHaveAttribute('srcdoc', /background-color:#123456/);
  // Back and Next again: what was typed on the step is still there.
  await wizard.getByRole('button', { name: 'Back' }).click();
  await expect(wizard.getByRole('heading', { name: 'Email info' })).toBeVisible();
  await next.click();
  await expect(wizard.getByRole('textbox', { name: 'Primary colour', exact: true })).toHaveValue('#123456');
  // A logo uploaded here is stored at once, so the preview (rendered from the stored application) shows it.
  await wizard.getByLabel('Upload logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: makePng(120, 40, [69, 189, 209]) });
  await expectNotice(page, 'Your logo has been uploaded!');
  await expect(wizard.frameLocator('iframe[title="Email preview"]').locator('img[src*="/cdn/logos/"]')).toBeVisible();
  await wizard.getByRole('button', { name: 'Finish' }).click();
  const success = page.getByRole('dialog', { name: 'Success' });
  await expect(success.getByText('Your Application has been successfully created!')).toBeVisible();
  await success.getByRole('button', { name: "Let's get started" }).click();
  // As its words promise: the new application's Getting Started, on the path that unlocks (the backend).
  await expect(page).toHaveURL(/\/getting-started\/backend$/);
  await page.getByRole('link', { name: 'Latchkey home' }).click();

  // Start screen tile → overview. Getting Started's own "Open Front Door" links are gone once the start screen is.
  await expect(page.getByRole('heading', { name: /My Applications/ })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Front Door' })).toBeVisible();
  await screenshot(page, 'start');
  await expectAccessible(page, 'start (with an application)');
  await page.getByRole('link', { name: 'Front Door' }).click();
  await expect(page).toHaveURL(/\/overview$/);
  const appId = new URL(page.url()).pathname.split('/')[1]!;
  await expect(page.getByRole('region', { name: 'Email & Branding' })).toBeVisible();
  await expectAccessible(page, 'overview');
  await screenshot(page, 'overview');
  // On a phone the 624 px email preview is scaled to the width there is, not cut off on the right.
  const desktop = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 844 });
  const frame = await page.getByTitle('Email preview').boundingBox();
  expect(frame!.x + frame!.width).toBeLessThanOrEqual(375);
  expect(frame!.width).toBeGreaterThan(300);
  // Every section of the shell can be reached on a phone: the one row of sections scrolls sideways, and
  // each link scrolled to lies wholly inside the screen (the page itself never scrolls sideways).
  for (const link of await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link').all()) {
    await link.scrollIntoViewIfNeeded();
    const box = (await link.boundingBox())!;
    // (Rounded: a link scrolled to the row's end can sit a fraction of a pixel over.)
    expect(Math.round(box.x), await link.innerText()).toBeGreaterThanOrEqual(0);
    expect(Math.round(box.x + box.width), await link.innerText()).toBeLessThanOrEqual(375);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await expectAccessible(page, 'overview (phone)');
  await page.setViewportSize(desktop);

  // Application card: edit, only the changed field is sent, save.
  const appCard = page.getByRole('region', { name: 'Application' });
  await appCard.getByRole('button', { name: 'Edit Application' }).click();
  await appCard.getByLabel('Application name').fill('Front Door 2');
  await appCard.getByRole('button', { name: 'Save' }).click();
  await expect(appCard.getByRole('button', { name: 'Edit Application' })).toBeVisible();
  await expect(page.getByText('Front Door 2').first()).toBeVisible();

  // Company URLs: clear the app link → sent as null.
  const urls = page.getByRole('region', { name: 'Company URLs' });
  await urls.getByRole('button', { name: 'Edit Company URLs' }).click();
  await urls.getByLabel('App link (optional)').fill('https://acme.example.com/app');
  await urls.getByRole('button', { name: 'Save' }).click();
  await expect(urls.getByRole('button', { name: 'Edit Company URLs' })).toBeVisible();

  // Authentication: key, auth domain, CORS domain — add and remove.
  const authCard = page.getByRole('region', { name: 'Authentication' });
  await authCard.getByRole('button', { name: 'Add Auth Key' }).click();
  const keyDialog = page.getByRole('dialog', { name: 'Add Auth Key' });
  await keyDialog.getByLabel('Public key (JWK)').fill('{ not json');
  await keyDialog.getByRole('button', { name: 'Save' }).click();
  // A bad paste stays in the dialog, text kept, with the reason under the field; Cancel leaves it.
  await expect(keyDialog.getByText('The key is not valid JSON')).toBeVisible();
  await expect(keyDialog.getByLabel('Public key (JWK)')).toHaveValue('{ not json');
  await expect(page.getByRole('alertdialog')).toHaveCount(0);
  await keyDialog.getByRole('button', { name: 'Cancel' }).click();
  /** Pastes a public JWK into the open key dialog and saves it. */
  const saveKey = async (dialog: 'Add Auth Key' | 'Edit Auth Key', kid: string) => {
    const open = page.getByRole('dialog', { name: dialog });
    await open.getByLabel('Public key (JWK)').fill(JSON.stringify(publicJwk(kid)));
    await open.getByRole('button', { name: 'Save' }).click();
  };
  await page.getByRole('button', { name: 'Add Auth Key' }).click();
  await saveKey('Add Auth Key', 'door-key-1');
  await expectNotice(page, 'You successfully added an Auth Key!');
  await expect(authCard.getByRole('button', { name: 'Edit key door-key-1' })).toBeVisible();
  // Editing a key replaces it.
  await authCard.getByRole('button', { name: 'Edit key door-key-1' }).click();
  await saveKey('Edit Auth Key', 'door-key-2');
  await expectNotice(page, 'You successfully updated the Auth Key!');
  await expect(authCard.getByRole('button', { name: 'Edit key door-key-2' })).toBeVisible();
  await expect(authCard.getByRole('button', { name: 'Edit key door-key-1' })).toHaveCount(0);

  await authCard.getByRole('button', { name: 'Add Auth Domain' }).click();
  await page.getByLabel('Auth domain URL').fill('https://issuer.acme.example.com');
  await page.getByRole('dialog').getByRole('button', { name: 'Add' }).click();
  await expect(authCard.getByText('https://issuer.acme.example.com')).toBeVisible();

  await authCard.getByRole('button', { name: 'Add CORS Domain' }).click();
  await page.getByLabel('CORS domain URL').fill('http://insecure.example.com');
  await expect(page.getByText('Not a valid SECURE url (make sure to add https://)')).toBeVisible();
  await page.getByLabel('CORS domain URL').fill('https://app.acme.example.com');
  await page.getByRole('dialog').getByRole('button', { name: 'Add' }).click();
  await expect(authCard.getByText('https://app.acme.example.com')).toBeVisible();

  await authCard.getByRole('button', { name: 'Remove CORS domain https://app.acme.example.com' }).click();
  await expect(page.getByText('Are you sure you want to remove this CORS Domain?')).toBeVisible();
  await page.getByRole('button', { name: 'Remove' }).click();
  await expect(authCard.getByText('https://app.acme.example.com')).toHaveCount(0);
  await screenshot(page, 'authentication');

  // Owners: add the second user by email, then remove them. No Remove on my own entry.
  await appCard.getByRole('button', { name: 'Edit Application' }).click();
  await expect(appCard.getByRole('button', { name: `Remove owner ${email}` })).toHaveCount(0);
  await appCard.getByRole('button', { name: 'Add owner' }).click();
  const ownerDialog = page.getByRole('dialog', { name: 'Add owner' });
  const nobody = uniqueEmail('nobody');
  await ownerDialog.getByLabel('Owner email').fill(nobody);
  await ownerDialog.getByRole('button', { name: 'Add' }).click();
  // Someone with no account is offered an invitation; declining it sends nothing and adds no one.
  const invite = page.getByRole('dialog', { name: `Invite ${nobody}?` });
  await expect(invite.getByRole('button', { name: 'Send invitation' })).toBeVisible();
  await invite.getByRole('button', { name: 'Cancel' }).click();
  await expect(invite).toHaveCount(0);
  await expect(appCard.getByText(nobody)).toHaveCount(0);
  await appCard.getByRole('button', { name: 'Add owner' }).click();
  await ownerDialog.getByLabel('Owner email').fill(second);
  await page.getByRole('dialog', { name: 'Add owner' }).getByRole('button', { name: 'Add' }).click();
  await expect(appCard.getByText(second)).toBeVisible();
  await appCard.getByRole('button', { name: `Remove owner ${second}` }).click();
  await expect(page.getByText('Are you sure you want to remove this owner?')).toBeVisible();
  await page.getByRole('button', { name: 'Remove' }).click();
  await expect(appCard.getByText(second)).toHaveCount(0);
  await appCard.getByRole('button', { name: 'Cancel' }).click();

  // Email & Branding: logo upload, then the preview follows a colour change as it is typed.
  const branding = page.getByRole('region', { name: 'Email & Branding' });
  await branding.getByRole('button', { name: 'Edit Email & Branding' }).click();
  await branding.getByLabel('Upload logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: makePng(120, 40) });
  await expectNotice(page, 'Your logo has been uploaded!');
  await expect(branding.getByRole('img', { name: /logo/i })).toHaveAttribute('src', new RegExp(`/cdn/logos/${appId}/`));
  // The server renders the stored application, so the preview loads again and shows the new logo at once.
  const logoSrc = await branding.getByRole('img', { name: /logo/i }).getAttribute('src');
  await expect(branding.frameLocator('iframe[title="Email preview"]').locator(`img[src="${logoSrc}"]`)).toBeVisible();
  // (Fetched with the owner's token and shown through srcdoc: the preview URL alone opens nothing.)
  const previewAsked = page.waitForRequest((r) => r.url().includes('/api/email/preview/') && r.url().includes('secondaryColour=%23abcdef') && /^Bearer /.test(r.headers().authorization ?? ''));
  await branding.getByRole('textbox', { name: 'Secondary colour', exact: true }).fill('#abcdef');
  await previewAsked;
  await branding.getByRole('button', { name: 'Save' }).click();
  // The one non-blocking notice every save gives.
  await expectNotice(page, 'Saved');
  await screenshot(page, 'email-branding');

  // The preview document itself (axe cannot enter the sandboxed frame, so it is checked on its own URL).
  await page.goto(`/api/email/preview/${appId}`);
  await expectAccessible(page, 'email preview');
  await page.goto(`/${appId}/overview`);

  // Getting started and settings screens.
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'Getting Started' }).click();
  await expect(page).toHaveURL(/getting-started\/backend$/);
  await expect(page.getByRole('region', { name: /Run the example script/ })).toBeVisible();
  await expectAccessible(page, 'getting started');
  await screenshot(page, 'getting-started');
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'Partner users' }).click();
  await expect(page.getByRole('heading', { name: 'Partner users' })).toBeVisible();
  await expectAccessible(page, 'settings');

  // Remove the application.
  await page.goto(`/${appId}/overview`);
  await page.getByRole('region', { name: 'Remove Application' }).getByRole('button', { name: 'Remove Application' }).click();
  await expect(page.getByText('Are you sure you want to remove this application?')).toBeVisible();
  await page.getByRole('button', { name: 'Remove', exact: true }).click();
  await expect(page.getByText('Your Application has been successfully deleted!')).toBeVisible();
  await page.getByRole('button', { name: 'Go to My Applications' }).click();
  await expect(page).toHaveURL(/\/start$/);
  await expect(page.getByRole('link', { name: 'Front Door 2' })).toHaveCount(0);

  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await expect(page).toHaveURL(/\/login$/);
  expect(await page.evaluate(() => localStorage.length)).toBe(0);
});

test('the portal in German: the switch on the splash page and in the user menu, remembered, with <html lang>', async ({ page, request }) => {
  const email = uniqueEmail('deutsch');
  const { authToken } = await registerViaApi(request, email);
  const appId = await createAppViaApi(request, authToken, 'Haustür');
  const finish = await request.post(`/api/platform/application/${appId}`, {
    headers: { authorization: `Bearer ${authToken}` },
    data: {
      privacyPolicy: 'https://haustuer.example.com/datenschutz',
      supportContact: 'mailto:hilfe@haustuer.example.com',
      emailPreferences: { senderEmail: 'schluessel@haustuer.example.com', senderName: 'Haustür-Team', onlySendEssentialEmails: true, callToAction: null },
    },
  });
  expect(finish.status()).toBe(204);
  await page.goto('/login');
  await page.getByRole('button', { name: 'Deutsch' }).click();
  await expect(page.getByRole('button', { name: 'Anmelden' })).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'de');
  await page.getByLabel('E-Mail').fill(email);
  await page.getByRole('textbox', { name: 'Passwort', exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Anmelden' }).click();
  await expect(page.getByRole('heading', { name: 'Meine Anwendungen' })).toBeVisible();
  await expectAccessible(page, 'start (German)');
  // Remembered: a new load starts in German.
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Meine Anwendungen' })).toBeVisible();
  // An application's overview in German: the README shows it beside the English one.
  await page.goto(`/${appId}/overview`);
  await expect(page.getByRole('heading', { name: 'Anwendung', exact: true })).toBeVisible();
  await expect(page.getByTitle('E-Mail-Vorschau')).toBeVisible();
  await expectAccessible(page, 'overview (German)');
  await screenshot(page, 'overview-de');
  await page.goto('/start');
  // Back to English from the user menu.
  await page.getByRole('button', { name: 'Kontomenü' }).click();
  await page.getByRole('menuitem', { name: 'English' }).click();
  await expect(page.getByRole('heading', { name: 'My Applications' })).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
});
