import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { createAppViaApi, expectAccessible, expectNotice, login, registerViaApi, uniqueEmail } from './support';

/**
 * An owner gives a sandbox lock's keypad its codes from the portal and tries them there: an online code
 * typed through Simulate opens the door and shows live in the activity with its name, an offline code is
 * computed for a window, a withdrawn code leaves the list, and the activity downloads as CSV.
 */
test('access codes on a sandbox lock: create, type at the simulated keypad, see it live, offline code, withdraw, CSV', async ({ page, request }) => {
  test.setTimeout(120_000);
  const email = uniqueEmail('codes');
  const { authToken } = await registerViaApi(request, email, 'Code Owner');
  const appId = await createAppViaApi(request, authToken, 'Keypad Doors');
  const locks = await request.get(`/api/platform/application/${appId}/lock`, { headers: { authorization: `Bearer ${authToken}` } });
  const lockId = ((await locks.json()) as { id: string }[])[0]!.id;

  await login(page, email);
  await page.goto(`/${appId}/locks/${lockId}`);
  await expect(page.getByRole('heading', { name: 'Front Door', level: 1 })).toBeVisible();
  await expect(page.getByText('Live', { exact: true })).toBeVisible();
  const codes = page.getByRole('region', { name: 'Access codes' });
  await expect(codes.getByText('No access codes yet.')).toBeVisible();

  // An online code, its digits made up by the platform, shown large once made.
  await codes.getByRole('button', { name: 'Create code' }).click();
  const create = page.getByRole('dialog', { name: 'Create access code' });
  await create.getByRole('textbox', { name: 'Name' }).fill('Cleaner');
  await expectAccessible(page, 'create access code');
  await create.getByRole('button', { name: 'Create code' }).click();
  const created = page.getByRole('dialog', { name: 'Code created' });
  const shown = created.getByRole('group', { name: 'code of Cleaner' });
  await expect(shown).toHaveText(/^\d{6}$/);
  const code = (await shown.textContent())!.trim();
  await expectAccessible(page, 'access code created');
  await created.getByRole('button', { name: 'Done' }).click();
  const cleaner = codes.getByRole('listitem').filter({ hasText: 'Cleaner' });
  await expect(cleaner).toContainText(code);
  await expect(cleaner).toContainText('Any time, no end');
  await expect(cleaner.getByText('Set', { exact: true })).toBeVisible();

  // Typed at the virtual lock's keypad: accepted, and the unlock arrives in the activity live, by the code's name.
  const activity = page.getByRole('region', { name: 'Activity' });
  await page.getByRole('button', { name: 'Simulate' }).click();
  await page.getByRole('menuitem', { name: 'Type a code at the keypad…' }).click();
  const keypad = page.getByRole('dialog', { name: 'Keypad' });
  await keypad.getByRole('textbox', { name: 'Code' }).fill('000000' === code ? '111111' : '000000');
  await keypad.getByRole('button', { name: 'Enter' }).click();
  await expect(keypad.getByText(/^Refused/)).toBeVisible();
  await keypad.getByRole('textbox', { name: 'Code' }).fill(code);
  await keypad.getByRole('button', { name: 'Enter' }).click();
  await expect(keypad.getByText('Accepted: the door unlocked.')).toBeVisible();
  await expectAccessible(page, 'simulated keypad');
  await keypad.getByRole('button', { name: 'Close' }).click();
  const unlocked = activity.getByRole('row').filter({ hasText: 'with access code “Cleaner”' });
  await expect(unlocked).toBeVisible();
  await expect(unlocked).toContainText('Accepted');

  // What the door reports, simulated: its sensor, its battery, a jam; the lock page follows live.
  const door = page.getByRole('group', { name: 'Door' });
  await expect(door).toContainText('Door: unknown');
  await page.getByRole('button', { name: 'Simulate' }).click();
  await page.getByRole('menuitem', { name: 'Door opened' }).click();
  await expectNotice(page, 'The door reported: opened.');
  await expect(door).toContainText('Door: open');
  await expect(activity.getByRole('row').filter({ hasText: 'Door opened' })).toContainText('Reported by the door');
  await page.getByRole('button', { name: 'Simulate' }).click();
  await page.getByRole('menuitem', { name: 'Battery level…' }).click();
  const battery = page.getByRole('dialog', { name: 'Battery level' });
  await battery.getByRole('spinbutton', { name: 'Battery (%)' }).fill('15');
  await battery.getByRole('button', { name: 'Report' }).click();
  await expect(door).toContainText('Battery 15 % (low)');
  await page.getByRole('button', { name: 'Simulate' }).click();
  await page.getByRole('menuitem', { name: 'Jammed' }).click();
  await expect(door).toContainText('Jammed');

  // An offline code: a window on whole hours, the code computed by the platform (10 digits).
  await codes.getByRole('button', { name: 'Create code' }).click();
  await create.getByRole('textbox', { name: 'Name' }).fill('Guest');
  await create.getByRole('radio', { name: 'Offline' }).check();
  await expect(create.getByLabel('Code (optional)')).toHaveCount(0);
  await create.getByRole('button', { name: 'Create code' }).click();
  await expect(created.getByRole('group', { name: 'code of Guest' })).toHaveText(/^\d{10}$/);
  await created.getByRole('button', { name: 'Done' }).click();
  const guest = codes.getByRole('listitem').filter({ hasText: 'Guest' });
  await expect(guest).toContainText('Offline');
  await expect(guest).toContainText(/ to /);

  // Withdrawing the online code takes it off the list, after confirming.
  await codes.getByRole('button', { name: 'Withdraw the code of Cleaner' }).click();
  const confirm = page.getByRole('dialog', { name: 'Withdraw the code of Cleaner?' });
  await expect(confirm).toContainText('A door that is offline now keeps accepting it until it is reached again.');
  await confirm.getByRole('button', { name: 'Withdraw' }).click();
  await expectNotice(page, 'The code of Cleaner has been withdrawn.');
  await expect(cleaner).toHaveCount(0);
  await expect(guest).toBeVisible();
  await expectAccessible(page, 'lock page with access codes');

  // The activity as CSV: fetched with the session, saved as a file.
  const download = page.waitForEvent('download');
  await activity.getByRole('button', { name: 'Download CSV' }).click();
  const file = await download;
  const csv = fs.readFileSync((await file.path())!, 'utf8');
  expect(csv.split(/\r?\n/)[0]).toMatch(/^time,lock_id,/);
  expect(csv).toContain('access_code');
  expect(csv).toContain('Cleaner');

  // On a 320 px phone the page stays within the screen.
  await page.setViewportSize({ width: 320, height: 740 });
  await expect(codes.getByRole('listitem').filter({ hasText: 'Guest' })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
});
