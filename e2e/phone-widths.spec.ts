import { expect, test } from '@playwright/test';
import { expectNoWiderThanViewport, phoneDialogs, seed, settled, signedInPages, signedOutPages, type Seed } from './phone-pages';
import { expectAccessible } from './support';

/**
 * No page of the portal may be wider than a phone. Every page, signed out and signed in, at 320
 * and 375 px, in English and in German: the document is no wider than the viewport (nothing cut off or
 * reachable only by scrolling sideways), and axe finds nothing serious there. The application is filled
 * with the long values that pushed pages wide: a long partner-user email, a share with a time window and
 * dates, a lock settings change in the activity log, an emailed invitation in the Outbox, a webhook, a
 * site with a long name (the Locks page's Sites), a tile with a long name (the lock's Tiles, its QR code
 * and naming dialogs, its page at the door).
 */

// The four walks are independent (each language seeds its own application, in each worker that runs it):
// they may run in different workers.
test.describe.configure({ mode: 'parallel' });

for (const language of ['en', 'de'] as const) {
  test.describe(`every page on a phone (${language})`, () => {
    test.use({ locale: language === 'de' ? 'de-DE' : 'en-US' });
    let data: Seed;
    test.beforeAll(async ({ request }) => {
      data = await seed(request);
    });

    for (const width of [320, 375]) {
      test(`no page is wider than ${width} px, and axe passes`, async ({ page }) => {
        test.setTimeout(240_000);
        await page.setViewportSize({ width, height: 740 });
        await page.addInitScript((lang) => localStorage.setItem('latchkey.language', lang), language);
        for (const path of signedOutPages(data)) {
          await page.goto(path);
          await settled(page);
          await expect(page.locator('html')).toHaveAttribute('lang', language);
          await expectNoWiderThanViewport(page, `${path} (${language})`);
          await expectAccessible(page, `${path} at ${width} px (${language})`);
        }
        await page.evaluate((session) => {
          for (const [key, value] of Object.entries(session)) localStorage.setItem(key, value);
        }, data.session);
        for (const path of signedInPages(data)) {
          await page.goto(path);
          await settled(page);
          await expectNoWiderThanViewport(page, `${path} (${language})`);
          await expectAccessible(page, `${path} at ${width} px (${language})`);
        }
        for (const { path, button, dialog } of phoneDialogs(data)) {
          await page.goto(path);
          await settled(page);
          await page.getByRole('button', { name: button }).click();
          await expect(page.getByRole('dialog', { name: dialog })).toBeVisible();
          await settled(page);
          await expectNoWiderThanViewport(page, `${dialog.source} on ${path} (${language})`);
          await expectAccessible(page, `${dialog.source} on ${path} at ${width} px (${language})`);
        }
      });
    }
  });
}
