import { expect, test } from '@playwright/test';
import { createAppViaApi, login, registerViaApi, uniqueEmail } from './support';

/**
 * Issue 4 "browser side": script-like strings in every user-editable field stay text, in the portal and
 * in the email preview; the portal's CSP forbids inline script; the preview may be framed by the portal only.
 */
const PAYLOAD = `<img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=1;alert(1)</script>"'><svg onload=alert(1)>`;

test('script-like strings render inert everywhere', async ({ page, request }) => {
  const email = uniqueEmail('xss');
  const { authToken } = await registerViaApi(request, email, PAYLOAD);
  const appId = await createAppViaApi(request, authToken, `App ${PAYLOAD}`);
  const update = await request.post(`/api/platform/application/${appId}`, {
    headers: { authorization: `Bearer ${authToken}` },
    data: {
      companyName: PAYLOAD,
      mailingAddress: PAYLOAD,
      privacyPolicy: `https://example.com/?q=${encodeURIComponent(PAYLOAD)}`,
      supportContact: 'mailto:help@example.com',
      emailPreferences: {
        senderName: PAYLOAD,
        senderEmail: 'x@example.com',
        callToAction: { headline: PAYLOAD, actionText: PAYLOAD, actionTarget: 'https://example.com/help' },
      },
    },
  });
  expect(update.status()).toBe(204);
  // A javascript: target is refused by the API, not stored.
  const bad = await request.post(`/api/platform/application/${appId}`, {
    headers: { authorization: `Bearer ${authToken}` },
    data: { emailPreferences: { callToAction: { headline: 'x', actionText: 'x', actionTarget: 'javascript:alert(1)' } } },
  });
  expect(bad.status()).toBe(400);

  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });
  await login(page, email);
  await expect(page.getByRole('link', { name: /App </ })).toBeVisible();
  await page.goto(`/${appId}/overview`);
  await expect(page.getByText(PAYLOAD).filter({ visible: true }).first()).toBeVisible();
  await page.goto(`/api/email/preview/${appId}?ctaHeadline=${encodeURIComponent(PAYLOAD)}&ctaAbridged=${encodeURIComponent(PAYLOAD)}`);
  await expect(page.getByText(PAYLOAD).filter({ visible: true }).first()).toBeVisible();
  await page.waitForTimeout(500);
  expect(dialogs).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
});

test('security headers: portal CSP without inline script, preview framable by the portal only', async ({ request }) => {
  const portal = await request.get('/login');
  const csp = portal.headers()['content-security-policy'] ?? '';
  expect(csp).toMatch(/script-src 'self'(;|$)/);
  expect(csp).not.toContain("'unsafe-inline' 'self'");
  expect(csp.match(/script-src[^;]*/)?.[0]).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(portal.headers()['x-content-type-options']).toBe('nosniff');
  expect(portal.headers()['referrer-policy']).toBeTruthy();

  const { authToken } = await registerViaApi(request, uniqueEmail('headers'));
  const appId = await createAppViaApi(request, authToken, 'Headers');
  const preview = await request.get(`/api/email/preview/${appId}`);
  expect(preview.status()).toBe(200);
  const previewCsp = preview.headers()['content-security-policy'] ?? '';
  expect(previewCsp).toContain("frame-ancestors 'self'");
  expect(previewCsp).toContain("default-src 'none'");
  expect(previewCsp.match(/script-src[^;]*/)?.[0] ?? '').not.toContain('unsafe-inline');
});
