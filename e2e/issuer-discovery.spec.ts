import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { createAppViaApi, expectAccessible, login, registerViaApi, screenshot, uniqueEmail } from './support';

/**
 * Issuer discovery as an owner walks it: an auth domain added with OpenID discovery against a local provider (the
 * server lets 127.0.0.1 through its outbound guard: OUTBOUND_ALLOW in playwright.config.ts), a token signed
 * with the provider's key passes the tester, which names the issuer's key set; an uploaded key past its
 * `exp` is marked; a test email of the unsaved branding reaches the Outbox.
 */
let provider: http.Server;
let base: string;
const kid = `idp-${randomUUID().slice(0, 8)}`;
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const signToken = (claims: Record<string, unknown>) => {
  const input = `${b64({ alg: 'EdDSA', kid, typ: 'JWT' })}.${b64(claims)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
};

test.beforeAll(async () => {
  provider = http.createServer((req, res) => {
    const issuer = `${base}/tenant`;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/tenant/.well-known/openid-configuration') return res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/keys` }));
    if (req.url === '/tenant/keys') {
      res.setHeader('cache-control', 'max-age=300');
      return res.end(JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' }] }));
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
});
test.afterAll(async () => {
  provider.closeAllConnections();
  await new Promise((r) => provider.close(r));
});

test('an auth domain with discovery verifies the issuer’s tokens; expired keys are marked; a test email reaches the Outbox', async ({ page, request }) => {
  test.setTimeout(120_000);
  const owner = uniqueEmail('discovery-owner');
  const { authToken } = await registerViaApi(request, owner, 'Discovery Owner');
  const appId = await createAppViaApi(request, authToken, 'Discovery Door');
  const issuer = `${base}/tenant`;
  const config = (await (await request.get('/api/config')).json()) as { platformAudience: string };

  await login(page, owner);
  await page.goto(`/${appId}/overview`);
  const authCard = page.getByRole('region', { name: 'Authentication' });

  // A bad issuer first: refused under the field, nothing added.
  await authCard.getByRole('button', { name: 'Add Auth Domain' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Auth Domain' });
  await dialog.getByLabel('Auth domain URL').fill(`${base}/nobody`);
  await dialog.getByRole('checkbox', { name: 'Load signing keys from the issuer’s OpenID configuration' }).check();
  await expectAccessible(page, 'auth domain dialog');
  await dialog.getByRole('button', { name: 'Add' }).click();
  await expect(dialog.getByText(/No OpenID configuration was found/)).toBeVisible();

  // The real issuer.
  await dialog.getByLabel('Auth domain URL').fill(issuer);
  await dialog.getByRole('button', { name: 'Add' }).click();
  await expect(dialog).toBeHidden();
  const domains = authCard.getByRole('list', { name: 'Auth Domains' });
  await expect(domains.getByRole('listitem')).toHaveCount(1);
  await expect(domains).toContainText(`OpenID discovery · Keys from ${issuer}/keys`);

  // A token signed with the provider's key (none uploaded) passes, and the tester says where the key came from.
  const now = Math.floor(Date.now() / 1000);
  await authCard.getByRole('button', { name: 'Test a user token' }).click();
  const tester = page.getByRole('dialog', { name: 'Test a user token' });
  await tester.getByLabel('User token (JWT)').fill(signToken({ iss: issuer, aud: config.platformAudience, sub: 'idp-user', iat: now, exp: now + 600 }));
  await tester.getByRole('button', { name: 'Check token' }).click();
  await expect(tester.getByText('All checks passed: the platform accepts this token.')).toBeVisible();
  await expect(tester.getByTestId('token-key-source')).toHaveText(`Key used: Key ${kid} from the issuer’s key set (${issuer}/keys)`);
  await tester.getByRole('button', { name: 'Close' }).click();

  // An uploaded key that has expired: marked on its chip, with a warning. A key already expired is refused
  // at upload, so this one expires a few seconds after it is saved.
  const { publicKey: uploaded } = generateKeyPairSync('ed25519');
  await authCard.getByRole('button', { name: 'Add Auth Key' }).click();
  const keyDialog = page.getByRole('dialog', { name: 'Add Auth Key' });
  const retiredExp = Math.floor(Date.now() / 1000) + 3;
  await keyDialog.getByLabel('Public key (JWK)').fill(JSON.stringify({ ...uploaded.export({ format: 'jwk' }), kid: 'retired', exp: retiredExp }));
  await keyDialog.getByRole('button', { name: 'Save' }).click();
  await expect(keyDialog).toBeHidden();
  await page.waitForTimeout(Math.max(0, retiredExp * 1000 - Date.now()) + 500);
  // …and one that expires in five days: a warning ahead.
  const { publicKey: ending } = generateKeyPairSync('ed25519');
  await authCard.getByRole('button', { name: 'Add Auth Key' }).click();
  await keyDialog.getByLabel('Public key (JWK)').fill(JSON.stringify({ ...ending.export({ format: 'jwk' }), kid: 'ending', exp: now + 5 * 86400 }));
  await keyDialog.getByRole('button', { name: 'Save' }).click();
  await expect(keyDialog).toBeHidden();
  const keys = authCard.getByRole('region', { name: 'Auth Keys' });
  await expect(keys.getByRole('listitem').filter({ hasText: 'retired' })).toContainText('Expired');
  await expect(keys.getByRole('listitem').filter({ hasText: 'ending' })).toContainText('Expires soon');
  await expect(keys.getByRole('alert').first()).toContainText('Key retired expired on');
  await expect(keys.getByRole('alert').nth(1)).toContainText('Key ending expires on');
  await expectAccessible(page, 'authentication card with an expired key');
  await screenshot(page, 'authentication-lifecycle');

  // A test email of an unsaved colour: sent, nothing saved, and in the Outbox.
  const branding = page.getByRole('region', { name: 'Email & Branding' });
  await branding.getByRole('button', { name: 'Edit Email & Branding' }).click();
  await branding.getByRole('textbox', { name: /^Primary colour/ }).fill('#7a1f5c');
  await branding.getByRole('button', { name: 'Send a test email' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Test email sent' })).toHaveText(`Test email sent to ${owner}; it is also in this application’s Outbox.`);
  await branding.getByRole('button', { name: 'Cancel' }).click();
  await page
    .getByRole('navigation', { name: 'Application sections' })
    .getByRole('link', { name: 'Outbox' })
    .click();
  // Without SMTP the account's own emails (the address verification) are in the Outbox too: pick the test email.
  await page.getByRole('button', { name: `Show email to ${owner}: [Test]` }).click();
  await expect(page.getByText('Test email').first()).toBeVisible();
  const email = page.frameLocator('iframe[title^="Email:"]');
  await expect(email.locator('body')).toContainText('Discovery Door');
  expect(await email.locator('body').innerHTML()).toMatch(/#7a1f5c/i);
});
