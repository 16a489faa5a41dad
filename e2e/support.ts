import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { expect, type APIRequestContext, type APIResponse, type Page } from '@playwright/test';

export { makePng } from '../apps/api/test/scale/png';

export const PASSWORD = 'journey-pass';
export const uniqueEmail = (label: string) => `${label}.${randomUUID().slice(0, 8)}@example.com`;

/** Seeding goes through the real API, as any client would. */
export async function registerViaApi(request: APIRequestContext, email: string, displayName = 'Second Owner') {
  const res = await request.post('/api/auth/register', { data: { email, password: PASSWORD, displayName } });
  expect(res.status()).toBe(200);
  return (await res.json()) as { authToken: string; refreshToken: string };
}

/** The answer, once it is a success (a status below 300); a failure's message is the answer's body. */
export async function ok(response: Promise<APIResponse>): Promise<APIResponse> {
  const res = await response;
  expect(res.status(), await res.text()).toBeLessThan(300);
  return res;
}

export async function createAppViaApi(request: APIRequestContext, token: string, name: string) {
  const res = await request.post('/api/platform/application', {
    headers: { authorization: `Bearer ${token}` },
    data: { name, companyName: `${name} Ltd`, mailingAddress: '1 Journey Road' },
  });
  expect(res.status()).toBe(201);
  return res.headers().location!.split('/').pop()!;
}

export async function login(page: Page, email: string, password = PASSWORD) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  await page.getByRole('button', { name: 'Login' }).click();
  await expect(page).toHaveURL(/\/start$/);
}

export function publicJwk(kid: string) {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...publicKey.export({ format: 'jwk' }), kid };
}

const shotsDir = path.resolve(import.meta.dirname, '../docs/screenshots');
/**
 * Screenshots of the main screens, saved where the README shows them — only on request
 * (`npm run screenshots` sets SCREENSHOTS=1), so running the tests leaves a checkout clean.
 */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}) {
  if (!process.env.SCREENSHOTS) return;
  fs.mkdirSync(shotsDir, { recursive: true });
  const file = path.join(shotsDir, `${name}.png`);
  // A save's notice still showing would sit over the middle of the picture: let it go first (4 s at most).
  await page.locator('.MuiSnackbar-root').waitFor({ state: 'detached', timeout: 10_000 }).catch(() => {});
  const frames = fullPage ? await page.locator('iframe').all() : [];
  if (frames.length === 0) return void (await page.screenshot({ path: file, fullPage }));
  // Chromium's full-page capture leaves out-of-process frames (the sandboxed email preview) blank, and a
  // lazy frame below the fold never loads: shoot a viewport as tall as the page once each frame has loaded.
  const viewport = page.viewportSize()!;
  await page.setViewportSize({ width: viewport.width, height: await page.evaluate(() => document.documentElement.scrollHeight) });
  for (const frame of frames) await expect(frame.contentFrame().locator('body')).not.toBeEmpty();
  await page.screenshot({ path: file });
  await page.setViewportSize(viewport);
}

/** axe-core, the copy @axe-core/playwright installs and runs. */
const axeSource = fs.readFileSync(
  createRequire(import.meta.resolve('@axe-core/playwright')).resolve('axe-core/axe.min.js'),
  'utf8',
);

interface Violation {
  id: string;
  impact?: string | null;
  nodes: { target: unknown[] }[];
}

/**
 * axe: no serious or critical violations on this screen, by axe's default rules (WCAG 2.0–2.2 A and AA and
 * its best practices). axe runs in the page (axe.run), put there once per document and left for the next
 * check of the same document (another width, a dialog opened). The email preview is a script-less
 * sandboxed frame that axe cannot enter, so frames are left out here and the preview document is checked
 * on its own URL instead (journey.spec.ts). Only violations are reported back: every rule still runs on
 * every node, but the nodes that pass are not collected.
 */
export async function expectAccessible(page: Page, label: string) {
  // A dialog still fading in or out would be judged half-way (axe reads half-transparent text as low
  // contrast): wait for the transitions that end (a spinner's never does).
  await page.waitForFunction(() =>
    document.getAnimations().every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().endTime === Infinity),
  );
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.evaluate(axeSource);
    await page.evaluate("axe.configure({ allowedOrigins: ['<same_origin>'], branding: { application: 'playwright' } })");
  }
  // A change during the check (a countdown chip relocking) then shows its end state at once, never a blend.
  const still = await page.addStyleTag({ content: '*, *::before, *::after { transition: none !important; }' });
  const violations = await page.evaluate((options) => {
    const { axe } = window as unknown as { axe: { run(context: object, options: object): Promise<{ violations: Violation[] }> } };
    return axe.run({ include: [], exclude: [] }, options).then((results) =>
      results.violations.map(({ id, impact, nodes }) => ({ id, impact, nodes: nodes.map(({ target }) => ({ target })) })),
    );
  }, { iframes: false, resultTypes: ['violations'] });
  await still.evaluate((style) => (style as Element).remove());
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${label}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`)).toEqual([]);
}

/**
 * The one non-blocking notice a save shows (a `status` live region). Other live regions may be on the page
 * (the audience's copy button announces "Copied"), so the notice is found by its text.
 */
export async function expectNotice(page: Page, text: string) {
  await expect(page.getByRole('status').filter({ hasText: text })).toHaveText(text);
}
