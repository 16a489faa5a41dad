import { expect, test } from '@playwright/test';
import { keyCode, mailMatch } from './outbox-mail';
import { PASSWORD, createAppViaApi, expectAccessible, login, registerViaApi, screenshot, uniqueEmail } from './support';

/**
 * Accounts people can trust: forgot password by email (the link read from the Outbox), email
 * verification with the banner's "Send again", and the platform JavaScript SDK's second-factor flow for a
 * new key (423 → code by email → signed code → certificate), each in Chromium against the built service.
 */
test('forgot password: the emailed link sets a new password, ends the old sessions and signs in', async ({ page, request }) => {
  const email = uniqueEmail('forgot');
  const old = await registerViaApi(request, email, 'Forgetful');
  await page.goto('/login');
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
  await page.getByLabel('Email').fill(email);
  await expectAccessible(page, 'forgot password');
  await page.getByRole('button', { name: 'Send me a link' }).click();
  await expect(page.getByRole('status')).toContainText(`If ${email} has an account`);
  await screenshot(page, 'forgot-password');

  const link = (await mailMatch(email, /https?:\/\/\S+\/reset-password#\S+/)).match[0];
  await page.goto(link);
  await page.getByRole('textbox', { name: 'New password' }).fill('a-new-password');
  await page.getByRole('textbox', { name: 'Repeat password' }).fill('a-new-password');
  await expectAccessible(page, 'reset password');
  await screenshot(page, 'reset-password');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page).toHaveURL(/\/start$/);
  // The session from before the reset has ended; the new password signs in, the old one no longer.
  expect((await request.get('/api/account', { headers: { authorization: `Bearer ${old.authToken}` } })).status()).toBe(401);
  expect((await request.post('/api/auth/token', { data: { email, password: PASSWORD } })).status()).toBe(401);
  expect((await request.post('/api/auth/token', { data: { email, password: 'a-new-password' } })).status()).toBe(200);

  // The link works once: used again, it says so and offers a new one.
  await page.goto(link);
  await page.getByRole('textbox', { name: 'New password' }).fill('third-password');
  await page.getByRole('textbox', { name: 'Repeat password' }).fill('third-password');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByText('This password reset link has already been used. Ask for a new one.')).toBeVisible();
  await page.getByRole('link', { name: 'Send a new link' }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
});

test('email verification: a banner with "Send again" until the emailed link is opened', async ({ page, request }) => {
  const email = uniqueEmail('verify');
  await registerViaApi(request, email, 'Unverified');
  await login(page, email);
  const banner = page.getByRole('region', { name: /Please verify your email address/ });
  await expect(banner).toBeVisible();
  await expectAccessible(page, 'start with the verification banner');
  const before = new Date().toISOString();
  await banner.getByRole('button', { name: 'Send again' }).click();
  await expect(page.getByRole('status').filter({ hasText: `A new link is on its way to ${email}` })).toBeVisible();
  const link = (await mailMatch(email, /https?:\/\/\S+\/verify-email#\S+/, { after: before })).match[0];
  await page.goto(link);
  await expect(page.getByText('Thank you: your email address is verified.')).toBeVisible();
  await expectAccessible(page, 'verify email');
  await page.getByRole('link', { name: 'Go to My Applications' }).click();
  await expect(page).toHaveURL(/\/start$/);
  await expect(page.getByRole('heading', { name: /My Applications/ })).toBeVisible();
  await expect(banner).toBeHidden();
});

test('the platform JavaScript SDK’s second factor in Chromium: doordeckInit rejects with state "verify", verifyCode certifies', async ({ page, request }) => {
  const email = uniqueEmail('sdk');
  const { authToken } = await registerViaApi(request, email, 'SDK User');
  await page.goto('/login');
  // The SDK's calls as doordeck-sdk-javascript makes them (common/services/certificate.js, doordeck.js):
  // POST /auth/certificate {ephemeralKey}; on 423 POST /auth/certificate/verify {ephemeralKey} (no method);
  // verifyCode: crypto_sign_detached(code, privateKey) in standard base64 → POST /auth/certificate/check.
  // libsodium's Ed25519 is WebCrypto's here; the wire is the same bytes.
  const init = await page.evaluate(async (token) => {
    const base64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
    const keys = (await crypto.subtle.generateKey('Ed25519', false, ['sign', 'verify'])) as CryptoKeyPair;
    const ephemeralKey = base64(await crypto.subtle.exportKey('raw', keys.publicKey));
    const post = (path: string, body: unknown) =>
      fetch(`/api${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const w = window as unknown as { sdk: { verifyCode: (code: string) => Promise<unknown> } };
    w.sdk = {
      verifyCode: async (code: string) => {
        const signature = await crypto.subtle.sign('Ed25519', keys.privateKey, new TextEncoder().encode(code));
        const res = await post('/auth/certificate/check', { verificationSignature: base64(signature) });
        if (!res.ok) return { state: 'fail', message: 'Something went wrong' };
        const cert = (await res.json()) as { certificateChain: string[]; userId: string };
        return { state: 'success', message: 'Doordeck SDK is loaded', chain: cert.certificateChain.length, userId: cert.userId };
      },
    };
    const first = await post('/auth/certificate', { ephemeralKey });
    if (first.ok) return { state: 'success' };
    if (first.status !== 423) return { state: 'error', message: 'Failed to get certificate' };
    const second = await post('/auth/certificate/verify', { ephemeralKey });
    const data = (await second.json()) as { method?: string };
    return data.method ? { state: 'verify', method: data.method } : { state: 'error', message: 'Failed to send 2FA request' };
  }, authToken);
  expect(init).toEqual({ state: 'verify', method: 'EMAIL' });
  const code = await keyCode(email);
  const wrong = await page.evaluate((c) => (window as unknown as { sdk: { verifyCode: (code: string) => Promise<unknown> } }).sdk.verifyCode(c), code === '000000' ? '111111' : '000000');
  expect(wrong).toEqual({ state: 'fail', message: 'Something went wrong' });
  const verified = await page.evaluate((c) => (window as unknown as { sdk: { verifyCode: (code: string) => Promise<unknown> } }).sdk.verifyCode(c), code);
  expect(verified).toMatchObject({ state: 'success', chain: 2 });
});

test('the account page: sessions, and deleting the account (refused while the last owner of an application)', async ({ page, request, browser }) => {
  const email = uniqueEmail('account');
  const { authToken } = await registerViaApi(request, email, 'Account Holder');
  await createAppViaApi(request, authToken, 'Kept Application');
  await login(page, email);
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Your account' }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByRole('heading', { name: 'Your account', level: 1 })).toBeVisible();
  const sessions = page.getByRole('region', { name: 'Where you are signed in' });
  await expect(sessions.getByText('This browser')).toBeVisible();
  // A second browser signed in: listed, and ended from here.
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await login(otherPage, email);
  await page.reload();
  await expect(sessions.getByRole('button', { name: /^End the session of/ })).toHaveCount(2); // the API seeding's and the other browser's
  await expectAccessible(page, 'account page');
  await screenshot(page, 'account');
  await sessions.getByRole('button', { name: /^End the session of/ }).last().click();
  await expect(sessions.getByRole('button', { name: /^End the session of/ })).toHaveCount(1);
  await other.close();

  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete my account' }).click();
  await expect(page.getByRole('alertdialog', { name: 'Your account was not deleted' })).toContainText('You are the last owner of an application.');
  await page.getByRole('button', { name: 'Done' }).click();

  // Without an application of its own, the account goes at once and signs out.
  const leaver = uniqueEmail('leaver');
  await registerViaApi(request, leaver, 'Leaver');
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await login(page, leaver);
  await page.goto('/account');
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete my account' }).click();
  await expect(page).toHaveURL(/\/login$/);
  expect((await request.post('/api/auth/token', { data: { email: leaver, password: PASSWORD } })).status()).toBe(401);
});

test('passkeys: added on the account page and signed in with, in Chromium’s virtual authenticator', async ({ page, request }) => {
  const email = uniqueEmail('passkey');
  await registerViaApi(request, email, 'Passkey Person');
  // A real WebAuthn ceremony: Chromium's virtual authenticator (CDP), a platform authenticator with resident keys.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await login(page, email);
  await page.goto('/account');
  const card = page.getByRole('region', { name: 'Passkeys' });
  await expect(card.getByText('You have no passkeys yet.')).toBeVisible();
  // A password session adds a passkey only with the second factor: the six-digit code emailed to the account.
  const asked = new Date().toISOString();
  await card.getByRole('button', { name: 'Add a passkey' }).click();
  const codeDialog = page.getByRole('dialog', { name: 'Confirm it is you' });
  await codeDialog.getByLabel('Code from the email').fill(await keyCode(email, asked));
  await expectAccessible(page, 'passkey code dialog');
  await codeDialog.getByRole('button', { name: 'Continue' }).click();
  await expect(codeDialog).toBeHidden();
  await expect(card.getByText('Passkey 1')).toBeVisible();
  // The account is told.
  expect((await mailMatch(email, /“Passkey 1”/, { after: asked })).mail.subject).toBe('A passkey was added to your Latchkey account');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(credentials).toHaveLength(1);
  await expectAccessible(page, 'account page with a passkey');

  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await expect(page).toHaveURL(/\/start$/);
  await page.goto('/account');
  const sessions = page.getByRole('region', { name: 'Where you are signed in' });
  await expect(sessions.getByRole('listitem').filter({ hasText: 'This browser' })).toContainText('signed in with a passkey');
  await expect(card.getByText(/Last used/)).toBeVisible();

  // Removed, it signs in no more.
  await card.getByRole('button', { name: 'Remove the passkey Passkey 1' }).click();
  await expect(card.getByText('You have no passkeys yet.')).toBeVisible();
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await expect(page.getByRole('alertdialog')).toBeVisible();
  await expect(page).toHaveURL(/\/login$/);
});
