import { execFileSync } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import { createAppViaApi, login, publicJwk, registerViaApi, uniqueEmail } from './support';

/**
 * Injection, browser side: script-like strings in every user-editable field stay text, in the portal and
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
  // The card's live preview: fetched with the owner's token, shown through a sandboxed srcdoc frame.
  const frame = page.locator('iframe[title="Email preview"]');
  await expect(frame).not.toHaveAttribute('src');
  await expect(page.frameLocator('iframe[title="Email preview"]').getByText(PAYLOAD).filter({ visible: true }).first()).toBeVisible();
  // No caller-chosen text or link at the top level of the portal's origin without a
  // token; the saved branding (its own stored payload) still renders, inert.
  const chosen = `/api/email/preview/${appId}?ctaHeadline=${encodeURIComponent(PAYLOAD)}&ctaTarget=${encodeURIComponent('https://evil.example/login')}`;
  expect((await request.get(chosen)).status()).toBe(401);
  await page.goto(chosen);
  await expect(page.getByText('evil.example')).toHaveCount(0);
  await page.goto(`/api/email/preview/${appId}`);
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

/**
 * A co-owner adds a key whose id carries a line break and a line of code. Whatever the
 * API accepts today (old rows exist), every sample the other owner copies keeps it inside one string
 * literal: evaluated, the literal is the id; no line of any sample starts with the planted code.
 */
const HOSTILE_KID = "k1');\nrequire('child_process').execSync('touch /tmp/latchkey-pwned');//\u2028$(id) ${x} \\(y)\u001b[201~";

/** Serves the application with the hostile key added, as a stored row from before the contract's checks. */
async function withHostileKey(page: Page, appId: string) {
  await page.route(`**/api/platform/application/${appId}`, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const response = await route.fetch();
    const body = (await response.json()) as { authKeys: Record<string, unknown> };
    const jwk = publicJwk(HOSTILE_KID);
    body.authKeys = { [HOSTILE_KID]: { ...jwk, use: 'sig' }, ...body.authKeys };
    await route.fulfill({ response, json: body });
  });
}

async function copied(page: Page, region: RegExp): Promise<string> {
  await page.getByRole('button', { name: new RegExp(`Copy code: ${region.source}`) }).click();
  return page.evaluate(() => navigator.clipboard.readText());
}

test('a key id carrying a newline and code stays a string literal in every copied sample', async ({ page, request, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const email = uniqueEmail('kid');
  const { authToken } = await registerViaApi(request, email);
  const appId = await createAppViaApi(request, authToken, 'Kid App');
  const headers = { authorization: `Bearer ${authToken}` };
  expect((await request.post(`/api/platform/application/${appId}/auth/issuer`, { headers, data: { url: 'https://auth.kid.example' } })).ok()).toBe(true);
  // Refused by the contract's key id rules, or stored by an older API: the samples must be safe either way.
  const added = await request.post(`/api/platform/application/${appId}/auth/key`, { headers, data: publicJwk(HOSTILE_KID) });
  expect([204, 400]).toContain(added.status());
  await withHostileKey(page, appId);
  await login(page, email);

  const noPlantedLine = (code: string) => {
    for (const line of code.split(/\r\n|[\n\r\u2028\u2029]/)) expect(line.trimStart(), line).not.toMatch(/^require\(/);
    expect(code).not.toMatch(/[\u2028\u2029]/);
    expect(code.includes('\u001b'), 'a raw ESC').toBe(false);
  };

  await page.goto(`/${appId}/getting-started/javascript`);
  const js = await copied(page, /Sign a user token on your backend: JavaScript code/);
  noPlantedLine(js);
  const kid = /kid: ('(?:[^'\\\n]|\\.)*'), typ: 'JWT'/.exec(js)?.[1];
  expect(kid, js).toBeDefined();
  expect(new Function(`'use strict'; return ${kid};`)()).toBe(HOSTILE_KID);

  await page.goto(`/${appId}/getting-started/android`);
  const kotlin = await copied(page, /Sign a user token on your backend: Kotlin code/);
  noPlantedLine(kotlin);
  expect(kotlin).toContain('.keyID("k1\');\\nrequire(\'child_process\').execSync(\'touch /tmp/latchkey-pwned\');//\\u2028\\$(id) \\${x} \\\\(y)\\u001B[201~")');

  await page.goto(`/${appId}/getting-started/ios`);
  const swift = await copied(page, /Sign a user token on your backend: Swift code/);
  noPlantedLine(swift);
  expect(swift).toContain('kid: "k1\');\\nrequire(\'child_process\').execSync(\'touch /tmp/latchkey-pwned\');//\\u{2028}$(id) ${x} \\\\(y)\\u{1B}[201~")');

  // Your backend: the shell command, run as a shell would, hands the script exactly the stored id.
  await page.goto(`/${appId}/getting-started/backend`);
  const command = await copied(page, /Run the example script/);
  expect(command).not.toMatch(/[^\P{C}\n]|[\u2028\u2029]/u);
  // The folder, install and fetch lines skipped; the script replaced by printing what it is given.
  const script = command.split('\n').slice(3).join('\n').replace('node unlock-from-backend.mjs', `sh -c 'printf %s "$KEY_ID"'`);
  expect(execFileSync('sh', ['-c', script], { encoding: 'utf8' })).toBe(HOSTILE_KID);
});
