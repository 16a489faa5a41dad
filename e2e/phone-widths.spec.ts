import { expect, test, type Page } from '@playwright/test';
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
 *
 * Each page is loaded once and checked at both widths, the second after the viewport changes: English
 * loads at 320 px and widens to 375, German loads at 375 px and narrows to 320, so each width is also
 * checked on a page first drawn at it.
 */

const HEIGHT = 740;

/** The viewport at `width`, and the page laid out again there (what resize observers change drawn too). */
async function resize(page: Page, width: number) {
  await page.setViewportSize({ width, height: HEIGHT });
  await page.waitForFunction((w) => window.innerWidth === w, width);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve)))));
  await settled(page);
}

for (const language of ['en', 'de'] as const) {
  test.describe(`every page on a phone (${language})`, () => {
    test.use({ locale: language === 'de' ? 'de-DE' : 'en-US' });
    const widths = language === 'en' ? [320, 375] : [375, 320];
    let data: Seed;
    test.beforeAll(async ({ request }) => {
      data = await seed(request);
    });

    /** This page at both widths: no wider than the viewport, and axe passes. */
    async function checkWidths(page: Page, label: string) {
      for (const [i, width] of widths.entries()) {
        if (i > 0) await resize(page, width);
        await expectNoWiderThanViewport(page, `${label} at ${width} px (${language})`);
        await expectAccessible(page, `${label} at ${width} px (${language})`);
      }
    }

    /** The seeded owner's session from the first page on (kept as the app leaves it after that). */
    async function signedIn(page: Page) {
      await page.addInitScript((session) => {
        for (const [key, value] of Object.entries(session)) if (localStorage.getItem(key) === null) localStorage.setItem(key, value);
      }, data.session);
    }

    test(`no signed-out page and no dialog is wider than ${widths.join(' or ')} px, and axe passes`, async ({ page }) => {
      test.setTimeout(240_000);
      await page.addInitScript((lang) => localStorage.setItem('latchkey.language', lang), language);
      for (const path of signedOutPages(data)) {
        await page.setViewportSize({ width: widths[0]!, height: HEIGHT });
        await page.goto(path);
        await settled(page);
        await expect(page.locator('html')).toHaveAttribute('lang', language);
        await checkWidths(page, path);
      }
      await page.evaluate((session) => {
        for (const [key, value] of Object.entries(session)) localStorage.setItem(key, value);
      }, data.session);
      for (const { path, button, dialog } of phoneDialogs(data)) {
        await page.setViewportSize({ width: widths[0]!, height: HEIGHT });
        await page.goto(path);
        await settled(page);
        await page.getByRole('button', { name: button }).click();
        await expect(page.getByRole('dialog', { name: dialog })).toBeVisible();
        await settled(page);
        await checkWidths(page, `${dialog.source} on ${path}`);
      }
    });

    test(`no signed-in page is wider than ${widths.join(' or ')} px, and axe passes`, async ({ page }) => {
      test.setTimeout(240_000);
      await page.addInitScript((lang) => localStorage.setItem('latchkey.language', lang), language);
      await signedIn(page);
      for (const path of signedInPages(data)) {
        await page.setViewportSize({ width: widths[0]!, height: HEIGHT });
        await page.goto(path);
        await settled(page);
        await expect(page.locator('html')).toHaveAttribute('lang', language);
        await checkWidths(page, path);
      }
    });
  });
}
