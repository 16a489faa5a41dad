import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { createAppViaApi, expectAccessible, login, registerViaApi, screenshot, uniqueEmail, expectNotice } from './support';

/**
 * Token verification as an owner walks it: register a key and an issuer, sign a user token in the test with the
 * private half (as the application's backend would), see the tester pass it check by check, have the
 * platform accept it, and find the user on the Settings page. Getting Started shows the owner's values.
 */

/** An application backend's Ed25519 key: the public JWK to register, and a signer for user tokens. */
function backendKey(kid: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' };
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signToken = (claims: Record<string, unknown>) => {
    const input = `${b64({ alg: 'EdDSA', kid, typ: 'JWT' })}.${b64(claims)}`;
    return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
  };
  return { publicJwk, signToken };
}

/** Today as the portal writes it in English: the browser's English (Playwright's browser is en-US). */
const today = () => new Intl.DateTimeFormat('en-US', { day: '2-digit', month: '2-digit', year: 'numeric' }).format(new Date());

test('a key and issuer registered, a signed user token passes the tester and the API, the user is listed', async ({ page, request }) => {
  test.setTimeout(120_000);
  const owner = uniqueEmail('token-owner');
  const member = uniqueEmail('member');
  const invited = uniqueEmail('invited');
  const { authToken } = await registerViaApi(request, owner, 'Token Owner');
  const appId = await createAppViaApi(request, authToken, 'Token Door');
  const suffix = randomUUID().slice(0, 8);
  const issuer = `https://auth-${suffix}.acme.example.com`;
  const kid = `backend-key-${suffix}`;
  const key = backendKey(kid);
  const config = (await (await request.get('/api/config')).json()) as { platformAudience: string };
  expect(config.platformAudience).toMatch(/^https?:\/\//);

  // Register the public key and the issuer through the Authentication card.
  await login(page, owner);
  await page.goto(`/${appId}/overview`);
  const authCard = page.getByRole('region', { name: 'Authentication' });
  await authCard.getByRole('button', { name: 'Add Auth Key' }).click();
  const keyDialog = page.getByRole('dialog', { name: 'Add Auth Key' });
  await keyDialog.getByLabel('Public key (JWK)').fill(JSON.stringify(key.publicJwk));
  await keyDialog.getByRole('button', { name: 'Save' }).click();
  await expectNotice(page, 'You successfully added an Auth Key!');
  await expect(authCard.getByRole('button', { name: `Edit key ${kid}` })).toBeVisible();
  await authCard.getByRole('button', { name: 'Add Auth Domain' }).click();
  await page.getByLabel('Auth domain URL').fill(issuer);
  await page.getByRole('dialog').getByRole('button', { name: 'Add' }).click();
  await expect(authCard.getByText(issuer)).toBeVisible();

  // Getting Started: this application's id, issuer, audience and key, in the steps and the code.
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'Getting Started' }).click();
  // A first visit lands on the backend path (the one that unlocks); the iOS tab has the Swift sample.
  await expect(page).toHaveURL(/getting-started\/backend$/);
  await page.getByRole('tab', { name: 'iOS' }).click();
  await expect(page).toHaveURL(/getting-started\/ios$/);
  const values = page.locator('dl');
  await expect(values.getByText(appId, { exact: true })).toBeVisible();
  await expect(values.getByText(issuer, { exact: true })).toBeVisible();
  await expect(values.getByText(config.platformAudience, { exact: true })).toBeVisible();
  await expect(values).toContainText(`${kid} (EdDSA)`);
  await expect(page.getByRole('region', { name: /Sign a user token on your backend: Swift code/ })).toContainText(`IssuerClaim(value: "${issuer}")`);
  await page.getByRole('tab', { name: 'Javascript' }).click();
  await expect(page).toHaveURL(/getting-started\/javascript$/);
  const jsSign = page.getByRole('region', { name: /Sign a user token on your backend: JavaScript code/ });
  await expect(jsSign).toContainText(`.setIssuer('${issuer}')`);
  await expect(jsSign).toContainText(`.setAudience('${config.platformAudience}')`);
  await expect(jsSign).toContainText(`kid: '${kid}'`);
  await expect(page.getByRole('region', { name: /Call the platform with the token: JavaScript code/ })).toContainText(`'${appId}'`);
  await expectAccessible(page, 'getting started (javascript)');
  // At 360 px the code scrolls inside its block; the page itself does not scroll sideways.
  await page.setViewportSize({ width: 360, height: 780 });
  await expect(jsSign).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  expect(await jsSign.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  await expectAccessible(page, 'getting started at 360 px');
  await page.setViewportSize({ width: 1280, height: 720 });

  // Sign tokens as the application's backend would.
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, aud: config.platformAudience, sub: 'member-42', email: member, name: 'Member Forty-Two', iat: now, exp: now + 600 };
  const good = key.signToken(claims);
  const wrongAudience = key.signToken({ ...claims, aud: 'https://elsewhere.example.com' });

  // The tester, opened from Getting Started: a failing token first, then the good one.
  await page.getByRole('link', { name: 'Open the token tester' }).click();
  await expect(page).toHaveURL(new RegExp(`/${appId}/overview\\?tokenTester=open$`));
  const tester = page.getByRole('dialog', { name: 'Test a user token' });
  const checks = tester.getByRole('list', { name: 'Checks' }).getByRole('listitem');
  await tester.getByLabel('User token (JWT)').fill(wrongAudience);
  await tester.getByRole('button', { name: 'Check token' }).click();
  await expect(tester.getByText(/The platform rejects this token: Wrong audience/)).toBeVisible();
  await expect(checks.filter({ hasText: 'Audience:' })).toContainText('Failed');
  await expect(checks.filter({ hasText: 'Audience:' })).toContainText('https://elsewhere.example.com');
  await expect(checks.filter({ hasText: 'Signature:' })).toContainText('Passed');

  await tester.getByLabel('User token (JWT)').fill(good);
  await tester.getByRole('button', { name: 'Check token' }).click();
  await expect(tester.getByText('All checks passed: the platform accepts this token.')).toBeVisible();
  await expect(checks).toHaveCount(8);
  await expect(checks.filter({ hasText: ': Passed' })).toHaveCount(8);
  await expect(tester.getByRole('region', { name: 'Decoded claims' })).toContainText('"sub": "member-42"');
  await expectAccessible(page, 'token tester');
  await screenshot(page, 'token-tester', { fullPage: false });
  await tester.getByRole('button', { name: 'Close' }).click();
  await expect(tester).toBeHidden();
  await expect(page).toHaveURL(new RegExp(`/${appId}/overview$`));

  // The platform accepts the token and creates the user.
  const identity = await request.get('/api/platform/auth', { headers: { authorization: `Bearer ${good}` } });
  expect(identity.status()).toBe(200);
  expect(await identity.json()).toEqual({ applicationId: appId, sub: 'member-42', email: member, displayName: 'Member Forty-Two' });
  const refused = await request.get('/api/platform/auth', { headers: { authorization: `Bearer ${wrongAudience}` } });
  expect(refused.status()).toBe(401);

  // Settings lists the user; add one by email (pending), find it by search, remove it.
  await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'Getting Started' }).click();
  await page.getByRole('link', { name: 'See partner users' }).click();
  await expect(page).toHaveURL(new RegExp(`/${appId}/settings$`));
  await expect(page.getByRole('heading', { name: 'Partner users' })).toBeVisible();
  const memberRow = page.getByRole('row').filter({ hasText: member });
  await expect(memberRow).toContainText('Member Forty-Two');
  await expect(memberRow).toContainText(today());
  await expect(memberRow).toContainText('Active');
  await expectAccessible(page, 'settings');
  await screenshot(page, 'partner-users');

  await page.getByRole('button', { name: 'Add user' }).click();
  const addDialog = page.getByRole('dialog', { name: 'Add user' });
  await addDialog.getByLabel('User email').fill('not-an-email');
  await expect(addDialog.getByText('Invalid email address')).toBeVisible();
  await expect(addDialog.getByRole('button', { name: 'Add' })).toBeDisabled();
  await addDialog.getByLabel('User email').fill(member);
  await addDialog.getByRole('button', { name: 'Add' }).click();
  await expect(addDialog.getByText('This user has already been added to the application')).toBeVisible();
  await expectAccessible(page, 'add user dialog');
  await addDialog.getByLabel('User email').fill(invited);
  await addDialog.getByRole('button', { name: 'Add' }).click();
  await expectNotice(page, `${invited} has been added. They stay pending until they first sign in.`);
  await expect(page.getByRole('row').filter({ hasText: invited })).toContainText('Pending');

  await page.getByRole('searchbox', { name: 'Search partner users' }).fill('invited');
  await expect(page.getByRole('row').filter({ hasText: member })).toHaveCount(0);
  await page.getByRole('button', { name: `Actions for ${invited}` }).click();
  await page.getByRole('menuitem', { name: 'Remove user' }).click();
  await expect(page.getByRole('dialog', { name: 'Are you sure you want to remove this user from the application?' })).toContainText(invited);
  await page.getByRole('button', { name: 'Remove', exact: true }).click();
  await expect(page.getByText('No partner users match “invited”')).toBeVisible();
  await page.getByRole('searchbox', { name: 'Search partner users' }).fill('');
  await expect(memberRow).toBeVisible();
  await expect(page.getByRole('row').filter({ hasText: invited })).toHaveCount(0);
});
