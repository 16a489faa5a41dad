import { expect, test } from '@playwright/test';
import { createAppViaApi, expectAccessible, login, registerViaApi, screenshot, uniqueEmail } from './support';

/**
 * Issue 19: an owner sees who changed what in the application's History, with filters and a readable
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
});
