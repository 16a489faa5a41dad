import { expect, test } from '@playwright/test';
import { createAppViaApi, expectAccessible, login, PASSWORD, registerViaApi, screenshot, uniqueEmail } from './support';

/**
 * An owner sees who changed what in the application's History, with filters and a readable
 * before/after.
 */
test('the History tab lists every change with its before and after, filters by kind, and is accessible', async ({ page, request }) => {
  const email = uniqueEmail('history');
  const { authToken } = await registerViaApi(request, email, 'History Owner');
  const appId = await createAppViaApi(request, authToken, 'History Doors');
  const auth = { authorization: `Bearer ${authToken}` };
  expect((await request.post(`/api/platform/application/${appId}`, { headers: auth, data: { name: 'History Doors 2', emailPreferences: { primaryColour: '#112233' } } })).status()).toBe(204);
  expect((await request.post(`/api/platform/application/${appId}/cors`, { headers: auth, data: { url: 'https://app.history.test' } })).status()).toBe(204);

  await login(page, email);
  await page.goto(`/${appId}/overview`);
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'History' }).click();
  const changes = page.getByRole('list', { name: 'Changes' });
  await expect(changes.getByRole('listitem')).toHaveCount(4);
  const rename = changes.getByRole('listitem').filter({ hasText: 'History Doors 2' });
  await expect(rename.getByRole('row', { name: 'Name History Doors History Doors 2' })).toBeVisible();
  await expect(rename.getByText(`by ${email}`)).toBeVisible();
  await expect(changes.getByRole('row', { name: 'Primary colour #00283C #112233' })).toBeVisible();
  await expectAccessible(page, 'history');
  await screenshot(page, 'history');

  await page.getByRole('combobox', { name: 'Kind of change' }).selectOption({ label: 'CORS domain' });
  await expect(page).toHaveURL(/\?kind=cors$/);
  await expect(changes.getByRole('listitem')).toHaveCount(1);
  await expect(changes.getByRole('row', { name: 'CORS domain — https://app.history.test' })).toBeVisible();

  // A former owner's changes can still be picked by who made them.
  const formerEmail = uniqueEmail('former');
  const former = await registerViaApi(request, formerEmail, 'Former Owner');
  const formerId = (JSON.parse(Buffer.from(former.authToken.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
  expect((await request.post(`/api/platform/application/${appId}/owner`, { headers: auth, data: { userId: formerId } })).status()).toBe(204);
  const byFormer = { authorization: `Bearer ${former.authToken}` };
  expect((await request.post(`/api/platform/application/${appId}`, { headers: byFormer, data: { companyName: 'Former Co' } })).status()).toBe(204);
  expect((await request.delete(`/api/platform/application/${appId}/owner`, { headers: auth, data: { userId: formerId } })).status()).toBe(204);
  await page.getByRole('combobox', { name: 'Kind of change' }).selectOption({ label: 'All changes' });
  await expect(page).toHaveURL(/\/history$/);
  await page.reload();
  await page.getByRole('combobox', { name: 'Changed by' }).selectOption({ label: formerEmail });
  await expect(page).toHaveURL(new RegExp(`\\?actor=${formerId}$`));
  await expect(changes.getByRole('listitem')).toHaveCount(1);
  await expect(changes.getByText(`by ${formerEmail}`)).toBeVisible();
});

/**
 * An owner adds a webhook (the secret shown once), sees its deliveries with status and
 * attempts, resends one, rotates the secret and deletes the endpoint, each after a confirmation.
 */
test('the Webhooks page adds an endpoint, shows the secret once, logs deliveries, rotates and deletes', async ({ page, request, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const email = uniqueEmail('webhooks');
  const { authToken } = await registerViaApi(request, email, 'Webhook Owner');
  const appId = await createAppViaApi(request, authToken, 'Webhook Doors');
  // A public address given literally: nothing answers it from here, so its deliveries wait for retries.
  const url = 'https://93.184.215.14/latchkey-hooks';

  await login(page, email);
  await page.goto(`/${appId}/overview`);
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'Webhooks' }).click();
  await expect(page.getByText(/No webhooks yet/)).toBeVisible();
  await expectAccessible(page, 'webhooks empty');

  await page.getByRole('button', { name: 'Add webhook' }).click();
  const add = page.getByRole('dialog', { name: 'Add webhook' });
  await add.getByRole('textbox', { name: /Endpoint URL/ }).fill('http://example.com/hooks');
  await add.getByRole('checkbox', { name: /application\.updated/ }).check();
  await add.getByRole('button', { name: 'Add' }).click();
  await expect(add.getByText('The URL must start with https://')).toBeVisible();
  await expectAccessible(page, 'add webhook dialog');
  await add.getByRole('textbox', { name: /Endpoint URL/ }).fill(url);
  await add.getByRole('button', { name: 'Add' }).click();
  const secretDialog = page.getByRole('dialog', { name: 'Signing secret' });
  const secret = (await secretDialog.locator('code').textContent())!;
  expect(secret).toMatch(/^whsec_/);
  await secretDialog.getByRole('button', { name: 'Copy signing secret' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  // The 'Copied' tooltip fades in: checked once it is fully shown (mid-fade its text is half transparent).
  await expect(page.getByRole('tooltip')).toHaveCSS('opacity', '1');
  await expectAccessible(page, 'webhook secret');
  await secretDialog.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByText(secret)).toHaveCount(0);

  // An event: the application changes; its delivery appears in the log.
  const renamed = await request.post(`/api/platform/application/${appId}`, { headers: { authorization: `Bearer ${authToken}` }, data: { name: 'Webhook Doors 2' } });
  expect(renamed.status()).toBe(204);
  const log = page.getByRole('table', { name: 'Deliveries' });
  await expect(log.getByRole('row', { name: /application\.updated/ })).toBeVisible({ timeout: 20_000 });
  await expectAccessible(page, 'webhooks with deliveries');
  await log.getByRole('button', { name: /Resend application\.updated/ }).click();
  await expect(log.getByRole('row', { name: /application\.updated/ })).toBeVisible();

  await page.getByRole('button', { name: `Rotate the secret of ${url}` }).click();
  await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = (await page.getByRole('dialog', { name: 'Signing secret' }).locator('code').textContent())!;
  expect(rotated).toMatch(/^whsec_/);
  expect(rotated).not.toBe(secret);
  await page.getByRole('dialog', { name: 'Signing secret' }).getByRole('button', { name: 'Done' }).click();

  await page.getByRole('button', { name: `Delete the webhook ${url}` }).click();
  await expectAccessible(page, 'delete webhook confirmation');
  await page.getByRole('dialog', { name: 'Delete this webhook?' }).getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText(/No webhooks yet/)).toBeVisible();
  await screenshot(page, 'webhooks');

  // Each of these changes is in the History, the secret never shown.
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'History' }).click();
  await page.getByRole('combobox', { name: 'Kind of change' }).selectOption({ label: 'Webhook' });
  await expect(page.getByRole('list', { name: 'Changes' }).getByRole('listitem')).toHaveCount(3);
  await expect(page.getByText(secret)).toHaveCount(0);
  await expect(page.getByRole('row', { name: 'Signing secret [redacted] [redacted]' })).toBeVisible();
});

/**
 * On a phone, the History's changes and the Webhooks' tables stack each row's cells with captions instead of
 * squeezing columns to a few letters or pushing them off-screen; both pages stay accessible there.
 */
test('History and Webhooks on a phone: rows stack, nothing off-screen, accessible', async ({ page, request }) => {
  const email = uniqueEmail('phone');
  const { authToken } = await registerViaApi(request, email, 'Phone Owner');
  const appId = await createAppViaApi(request, authToken, 'Phone Doors');
  const auth = { authorization: `Bearer ${authToken}` };
  const hook = await request.post(`/api/platform/application/${appId}/webhook`, { headers: auth, data: { url: 'https://93.184.215.14/phone-hooks', events: ['application.updated'] } });
  expect(hook.status()).toBe(201);
  const webhookId = ((await hook.json()) as { id: string }).id;
  expect((await request.post(`/api/platform/application/${appId}`, { headers: auth, data: { companyName: 'Phone Doors Incorporated' } })).status()).toBe(204);

  await page.setViewportSize({ width: 375, height: 800 });
  await login(page, email);
  await page.goto(`/${appId}/history?kind=details`);
  const row = page.getByRole('row', { name: /^Company name/ }).first();
  await expect(row).toBeVisible();
  // The field's name spans the row (three columns left it a quarter of it), its before and after side by side.
  expect((await row.getByRole('rowheader').boundingBox())!.width).toBeGreaterThan(250);
  await expect(row.getByRole('cell').nth(1)).toHaveText('Phone Doors Incorporated');
  const [before, after] = [(await row.getByRole('cell').nth(0).boundingBox())!, (await row.getByRole('cell').nth(1).boundingBox())!];
  expect(after.y).toBe(before.y);
  expect(after.x).toBeGreaterThan(before.x + before.width - 1);
  await expectAccessible(page, 'history on a phone');

  await page.goto(`/${appId}/webhooks?webhook=${webhookId}`);
  const log = page.getByRole('table', { name: 'Deliveries' });
  const resend = log.getByRole('button', { name: /Resend application\.updated/ });
  await expect(resend).toBeVisible({ timeout: 20_000 });
  for (const control of [resend, page.getByRole('button', { name: 'Delete the webhook https://93.184.215.14/phone-hooks' })]) {
    const box = (await control.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(375);
  }
  await expectAccessible(page, 'webhooks on a phone');
});

/** The outbound guard's refusal, with the host it names, reads in German on a German page. */
test.describe('in German', () => {
  test.use({ locale: 'de-DE' });
  test('a refused webhook URL is explained in the reader’s language', async ({ page, request }) => {
    const email = uniqueEmail('german');
    const { authToken } = await registerViaApi(request, email, 'Deutsche Eigentümerin');
    const appId = await createAppViaApi(request, authToken, 'Deutsche Türen');
    await page.goto('/login');
    await page.getByLabel('E-Mail').fill(email);
    await page.getByRole('textbox', { name: 'Passwort', exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await expect(page).toHaveURL(/\/start$/);
    await page.goto(`/${appId}/webhooks`);
    await page.getByRole('button', { name: 'Webhook hinzufügen' }).click();
    const add = page.getByRole('dialog', { name: 'Webhook hinzufügen' });
    await add.getByRole('textbox', { name: /Endpunkt-URL/ }).fill('https://10.0.0.5/hooks');
    await add.getByRole('checkbox', { name: /application\.updated/ }).check();
    await add.getByRole('button', { name: 'Hinzufügen' }).click();
    await expect(add.getByText('Die URL muss auf eine öffentliche Adresse zeigen: private, Loopback-, Link-Local- und Metadaten-Adressen werden nicht aufgerufen: 10.0.0.5')).toBeVisible();
    await expect(add.getByRole('textbox', { name: /Endpunkt-URL/ })).toHaveValue('https://10.0.0.5/hooks');
  });
});
