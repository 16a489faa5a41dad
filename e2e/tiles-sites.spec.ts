import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { baseURL } from '../playwright.config';
import { expectNoWiderThanViewport, settled } from './phone-pages';
import { keyCode, mailMatch } from './outbox-mail';
import { createAppViaApi, expectAccessible, expectNotice, login, ok, registerViaApi, screenshot, uniqueEmail } from './support';

/**
 * Tiles and sites as an owner walks them: a tile on the lock page and its QR code, a site on the Locks
 * page, the tile's URL opened on a phone that unlocks from the browser. Lock shares go to the
 * application's users, not to portal accounts: on the tile's page a signed-in portal account sees the
 * doors of the applications it owns, an application's app finds the door with GET /tile/{id}, and a person
 * a lock is shared with signs in on the tile's page with a link emailed to the address it was shared with.
 */

/** The application backend's Ed25519 key: the public JWK to register, and a signer for user tokens. */
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

async function ownerWithApplication(request: APIRequestContext) {
  const email = uniqueEmail('tile.owner');
  const { authToken } = await registerViaApi(request, email, 'Tile Owner');
  const headers = { authorization: `Bearer ${authToken}` };
  const appId = await createAppViaApi(request, authToken, 'Tile Doors');
  const app = `/api/platform/application/${appId}`;
  const suffix = randomUUID().slice(0, 8);
  const issuer = `https://auth-${suffix}.tiles.example.com`;
  const key = backendKey(`tile-key-${suffix}`);
  await ok(request.post(`${app}/auth/key`, { headers, data: key.publicJwk }));
  await ok(request.post(`${app}/auth/issuer`, { headers, data: { url: issuer } }));
  const locks = (await (await ok(request.get(`${app}/lock`, { headers }))).json()) as { id: string; name: string }[];
  const { platformAudience } = (await (await request.get('/api/config')).json()) as { platformAudience: string };
  /** A token the application's backend signs for one of its users. */
  const userToken = (sub: string, userEmail: string, name: string) => {
    const now = Math.floor(Date.now() / 1000);
    return key.signToken({ iss: issuer, aud: platformAudience, sub, email: userEmail, name, iat: now, exp: now + 900 });
  };
  return { email, headers, appId, app, lock: locks[0]!, userToken };
}

test('a tile’s QR code on the lock page, a site on the Locks page; on a phone, the tile’s page unlocks the door', async ({
  page,
  browser,
  request,
}) => {
  test.setTimeout(180_000);
  const owner = await ownerWithApplication(request);
  const doorUser = uniqueEmail('door.user');
  const stranger = uniqueEmail('stranger');
  await ok(request.post(`${owner.app}/lock/${owner.lock.id}/user`, { headers: owner.headers, data: { email: doorUser, role: 'USER' } }));

  // The owner makes a tile on the lock page: its QR code opens at once, for the tile's short URL.
  await login(page, owner.email);
  // A verified account: the pages below without the verification banner.
  await page.goto((await mailMatch(owner.email, /https?:\/\/\S+\/verify-email#\S+/)).match[0]);
  await expect(page.getByText('Thank you: your email address is verified.')).toBeVisible();
  await page.goto(`/${owner.appId}/locks/${owner.lock.id}`);
  const tiles = page.getByRole('region', { name: 'Tiles' });
  await expect(tiles.getByText('No tiles yet.')).toBeVisible();
  await expectAccessible(page, 'lock page: tiles card (empty)');
  await tiles.getByRole('button', { name: 'New tile' }).click();
  const qr = page.getByRole('dialog', { name: 'Tile QR code' });
  const url = (await qr.getByRole('link').textContent())!;
  expect(url).toMatch(new RegExp(`^${baseURL}/t/[0-9a-f-]{36}$`));
  const tileId = url.split('/t/')[1]!;
  await expect(qr.getByRole('img', { name: `QR code for ${url}` })).toBeVisible();
  await expectAccessible(page, 'tile QR dialog');
  // The service's PUBLIC_URL is a loopback address: the dialog says so, with commands whose copy buttons
  // leave every line of code in view (the block is narrow here, so the button sits above the code).
  const commands = qr.locator('pre');
  await expect(commands.first()).toBeVisible();
  for (const command of await commands.all()) {
    const [code, copy] = [await command.locator('code').boundingBox(), await command.locator('xpath=..').getByRole('button').boundingBox()];
    expect(copy!.y + copy!.height, `the copy button is above ${await command.getAttribute('aria-label')}`).toBeLessThanOrEqual(code!.y);
  }
  await screenshot(page, 'tile-qr', { fullPage: false });
  // The code is the server's SVG of that URL, served to the owner only.
  const svg = await request.get(`/api/platform/application/${owner.appId}/lock/${owner.lock.id}/tile/${tileId}/qr`, { headers: owner.headers });
  expect(svg.headers()['content-type']).toContain('image/svg+xml');
  await qr.getByRole('button', { name: 'Done' }).click();
  await expect(qr).toBeHidden();
  await expect(tiles.getByRole('list', { name: 'Tiles' })).toContainText(tileId);
  await expect(tiles.getByRole('button', { name: `QR code of tile ${tileId.slice(0, 8)}` })).toBeVisible();
  await expectAccessible(page, 'lock page: tiles card');

  // Sites on the Locks page: add one, put the lock in it.
  await page.goto(`/${owner.appId}/locks`);
  const sites = page.getByRole('region', { name: 'Sites' });
  await expect(sites.getByText('No sites yet.')).toBeVisible();
  await expectAccessible(page, 'locks page: sites card (empty)');
  await sites.getByRole('button', { name: 'Add site' }).click();
  const addSite = page.getByRole('dialog', { name: 'Add site' });
  await addSite.getByRole('textbox', { name: 'Site name' }).fill('Main Building');
  await addSite.getByRole('button', { name: 'Add site' }).click();
  await expectNotice(page, 'Site added');
  await sites.getByRole('combobox', { name: owner.lock.name }).selectOption({ label: 'Main Building' });
  await expect(sites.getByRole('list', { name: 'Sites' }).getByRole('listitem').filter({ hasText: 'Main Building' })).toContainText('1 lock');
  await expectAccessible(page, 'locks page: sites card');
  await screenshot(page, 'sites');
  for (const width of [375, 320]) {
    await page.setViewportSize({ width, height: 740 });
    await expectNoWiderThanViewport(page, `the Locks page with a site at ${width} px`);
    await expectAccessible(page, `the Locks page with a site at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 720 });

  // On a phone, signed in to the portal (only owners are the portal's lock users), the tile's page
  // lists the door and unlocks it: this browser's new key asks for the emailed code first.
  const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  const door = await phone.newPage();
  await login(door, owner.email);
  await door.goto(`/t/${tileId}`);
  await expect(door.getByRole('heading', { name: 'At the door', level: 1 })).toBeVisible();
  const frontDoor = door.getByRole('region', { name: owner.lock.name });
  await expect(frontDoor.getByText('Locked', { exact: true })).toBeVisible();
  await settled(door);
  await expectAccessible(door, '/t/{tileId} at 375 px');
  await expectNoWiderThanViewport(door, '/t/{tileId} at 375 px');
  await door.setViewportSize({ width: 320, height: 640 });
  await expectNoWiderThanViewport(door, '/t/{tileId} at 320 px');
  await door.setViewportSize({ width: 375, height: 740 });
  await frontDoor.getByRole('button', { name: 'Unlock' }).click();
  const codeDialog = door.getByRole('dialog', { name: 'Confirm this browser’s key' });
  await codeDialog.getByLabel('Code from the email').fill(await keyCode(owner.email));
  await expectNoWiderThanViewport(door, 'the code dialog on /t/{tileId} at 375 px');
  await codeDialog.getByRole('button', { name: 'Confirm' }).click();
  await expect(codeDialog).toBeHidden();
  // The result: the door shows itself unlocked, and the lock's log has the accepted unlock.
  await expect(frontDoor.getByText(/^Unlocked · locks in \d+ s$/)).toBeVisible();
  await expect(door.getByRole('dialog')).toHaveCount(0);
  const log = (await (await ok(request.get(`${owner.app}/lock/${owner.lock.id}/log`, { headers: owner.headers }))).json()) as unknown;
  expect(JSON.stringify(log)).toContain(owner.email);
  await expectAccessible(door, '/t/{tileId} unlocked');
  await phone.close();

  // The user the lock is shared with reaches it through the application's app: the tile answers their
  // token (the application's backend signed it) with the door; a user it is not shared with gets nothing.
  const asUser = (token: string) => ({ authorization: `Bearer ${token}` });
  const shared = await ok(request.get(`/api/tile/${tileId}`, { headers: asUser(owner.userToken('door-user-1', doorUser, 'Door User')) }));
  expect(((await shared.json()) as { deviceIds: string[] }).deviceIds).toEqual([owner.lock.id]);
  const notShared = await request.get(`/api/tile/${tileId}`, { headers: asUser(owner.userToken('stranger-1', stranger, 'Stranger')) });
  expect(notShared.status()).toBe(404);

  // A portal account that owns nothing of the application finds no door behind the tile.
  await registerViaApi(request, stranger, 'Stranger');
  await page.getByRole('button', { name: 'Account menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await login(page, stranger);
  await page.goto(`/t/${tileId}`);
  await expect(page.getByText('This code opens no door you have access to.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Unlock' })).toHaveCount(0);
});

test('prints a tile’s QR code, opens /t/{tileId} at a phone’s width as a shared user and unlocks; axe clean', async ({ browser, request }) => {
  test.setTimeout(180_000);
  const owner = await ownerWithApplication(request);
  // The owner shares the lock with an email address nobody has used yet (a pending user) and makes a tile.
  const sharedUser = uniqueEmail('shared.user');
  await ok(request.post(`${owner.app}/lock/${owner.lock.id}/user`, { headers: owner.headers, data: { email: sharedUser, role: 'USER' } }));
  const tile = (await (await ok(request.post(`${owner.app}/lock/${owner.lock.id}/tile`, { headers: owner.headers }))).json()) as { tileId: string; url: string };
  expect(tile.url).toBe(`${baseURL}/t/${tile.tileId}`);
  const qr = await ok(request.get(`${owner.app}/lock/${owner.lock.id}/tile/${tile.tileId}/qr`, { headers: owner.headers }));
  expect(qr.headers()['content-type']).toContain('image/svg+xml');

  // A phone that never signed in to anything scans the code.
  const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  const door = await phone.newPage();
  await door.goto(tile.url);
  await expect(door.getByRole('heading', { name: 'At the door', level: 1 })).toBeVisible();
  const signIn = door.getByRole('region', { name: 'Sign in to open the door' });
  const email = signIn.getByRole('textbox', { name: 'Email address' });
  await expect(email).toBeVisible();
  await settled(door);
  await expectAccessible(door, 'the tile page signed out at 375 px');
  await expectNoWiderThanViewport(door, 'the tile page signed out at 375 px');
  await door.setViewportSize({ width: 320, height: 640 });
  await expectNoWiderThanViewport(door, 'the tile page signed out at 320 px');
  await door.setViewportSize({ width: 375, height: 740 });

  // A bad address is refused on the spot; the shared one (in any case) gets the link.
  await email.fill('not-an-email');
  await signIn.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expect(signIn.getByText('Invalid email address')).toBeVisible();
  await email.fill(sharedUser.toUpperCase());
  await signIn.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expect(door.getByRole('heading', { name: 'Check your email' })).toBeVisible();
  await expectAccessible(door, 'the tile page: check your email');
  await expectNoWiderThanViewport(door, 'the tile page: check your email at 375 px');
  await screenshot(door, 'tile-check-email');

  // The emailed link, opened on the phone: signed in, the link gone from the address bar, the door listed.
  const link = (await mailMatch(sharedUser, new RegExp(`${baseURL}/t/${tile.tileId}#signin=[A-Za-z0-9_-]+`))).match[0];
  await door.goto(link);
  const frontDoor = door.getByRole('region', { name: owner.lock.name });
  await expect(frontDoor.getByText('Locked', { exact: true })).toBeVisible();
  expect(new URL(door.url()).search).toBe('');
  expect(new URL(door.url()).hash).toBe('');
  expect(await door.evaluate(() => sessionStorage.getItem('latchkey.tileSignIn'))).toContain('authToken');
  expect(await door.evaluate(() => localStorage.getItem('token'))).toBeNull();
  await settled(door);
  await expectAccessible(door, 'the tile page signed in as a shared user');
  await expectNoWiderThanViewport(door, 'the tile page signed in at 375 px');
  await door.setViewportSize({ width: 320, height: 640 });
  await expectNoWiderThanViewport(door, 'the tile page signed in at 320 px');
  await door.setViewportSize({ width: 375, height: 740 });

  // Unlock: a new key in the browser, certified with the lock-user token (no code: not a password account).
  await frontDoor.getByRole('button', { name: 'Unlock' }).click();
  await expect(frontDoor.getByText(/^Unlocked · locks in \d+ s$/)).toBeVisible();
  await expect(door.getByRole('dialog')).toHaveCount(0);
  await expectAccessible(door, 'the tile page unlocked by a shared user');
  await screenshot(door, 'tile-shared-user');
  const log = (await (await ok(request.get(`${owner.app}/lock/${owner.lock.id}/log`, { headers: owner.headers }))).json()) as unknown;
  expect(JSON.stringify(log)).toContain(sharedUser);

  // The link worked once; Sign out forgets the token.
  expect((await request.post('/api/tile/sign-in/verify', { data: { token: new URLSearchParams(new URL(link).hash.slice(1)).get('signin') } })).status()).toBe(400);
  await door.getByRole('button', { name: 'Sign out' }).click();
  await expect(door.getByRole('textbox', { name: 'Email address' })).toBeVisible();
  expect(await door.evaluate(() => sessionStorage.getItem('latchkey.tileSignIn'))).toBeNull();
  await phone.close();
});
