import fs from 'node:fs';
import path from 'node:path';
import { randomUUID, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { apiErrors, LOCK_USER_TOKEN_TTL_HOURS, tileErrors, type LockTile, type TileSignInResponse } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { applicationUsers, sentEmails, tileSignInTokens } from '../../db/schema.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';
import { settleAccountMail } from '../account/account-trust.service.js';
import { injectAny } from '../../../test/security/streams.js';
import { TILE_SIGN_IN_LIMITS } from './tiles.routes.js';

/**
 * Signing in at a tile with an emailed link: a person a lock is shared with (an application user, no
 * portal account) gets a single-use link, and the link a lock-user token that opens only what is theirs.
 */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let door: string;
let backDoor: string;
let foreignLock: string;
let tileId: string;
let foreignEmail: string;

interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}
async function mailsTo(to: string): Promise<Mail[]> {
  await settleAccountMail(t.app);
  const dir = path.join(t.dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Mail)
    .filter((m) => m.to.toLowerCase() === to.toLowerCase());
}
/** The secret of the newest sign-in link mailed to `to`, for `tile`. */
async function linkSecret(to: string, tile = tileId): Promise<string | null> {
  const pattern = new RegExp(`${t.app.config.publicUrl}/t/${tile}#signin=([A-Za-z0-9_-]+)`);
  const match = (await mailsTo(to)).map((m) => m.text.match(pattern)).filter(Boolean).at(-1);
  return match ? match[1]! : null;
}

let addresses = 0;
/** Each call from its own address unless told: the per-address limit is tested on its own. */
const post = (url: string, payload: object, headers: Record<string, string> = {}, remoteAddress = `198.51.100.${++addresses % 250}`) =>
  t.app.inject({ method: 'POST', url: `/api${url}`, payload, headers, remoteAddress });
const ask = (email: string, tile = tileId, headers: Record<string, string> = {}) => post(`/tile/${tile}/sign-in`, { email }, headers);
const verify = (token: string) => post('/tile/sign-in/verify', { token });
async function signIn(email: string): Promise<TileSignInResponse> {
  expect((await ask(email)).statusCode).toBe(202);
  const secret = await linkSecret(email);
  expect(secret, `a link for ${email}`).not.toBeNull();
  const res = await verify(secret!);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as TileSignInResponse;
}

/** A user the application's backend signed in once, with a share of `lock` by id. */
async function activeUser(prefix: string, lock = door, values: { endsAt?: Date } = {}) {
  const email = uniqueEmail(prefix);
  const id = (await certify(t, await appUserToken(sandbox, `${prefix}-${randomUUID()}`, email))).userId;
  await share(t, lock, id, { role: 'USER', ...values });
  return { email, id };
}
/** A share to an address with no user yet: a pending application user. */
async function pendingUser(prefix: string): Promise<string> {
  const email = uniqueEmail(prefix);
  const shared = await t.app.inject({
    method: 'POST',
    url: `/api/platform/application/${sandbox.applicationId}/lock/${door}/user`,
    headers: bearer(sandbox.owner.token),
    payload: { email, role: 'USER' },
  });
  expect(shared.statusCode, shared.body).toBeLessThan(300);
  return email;
}

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  door = await createLock(t, sandbox.applicationId, { name: 'Tile Door' });
  backDoor = await createLock(t, sandbox.applicationId, { name: 'Back Door' });
  foreignLock = await createLock(t, other.applicationId, { name: 'Elsewhere' });
  const made = await t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/lock/${door}/tile`, headers: bearer(sandbox.owner.token) });
  expect(made.statusCode).toBe(201);
  tileId = (made.json() as LockTile).tileId;
  // Another application's user, with a share of that application's lock.
  foreignEmail = uniqueEmail('tile-foreign');
  await share(t, foreignLock, (await certify(t, await appUserToken(other, `foreign-${randomUUID()}`, foreignEmail))).userId, { role: 'ADMIN' });
});
afterAll(() => t?.close());

describe('POST /tile/{tileId}/sign-in', () => {
  it('emails a single-use link only to an address a lock of the tile is shared with (any case; pending or active); the same 202 otherwise', async () => {
    const sameBody = { message: tileErrors.signInSent };
    // Users of this test's own: the mails counted below are theirs alone, whichever tests ran before.
    const pendingEmail = await pendingUser('tile-pending');
    const { email: activeEmail } = await activeUser('tile-active');
    // Only the back door is shared with this one: a key, but not to a door behind this tile.
    const { email: elsewhereEmail } = await activeUser('tile-elsewhere', backDoor);
    // A share that has ended.
    const { email: endedEmail } = await activeUser('tile-ended', door, { endsAt: new Date(Date.now() - 60_000) });
    const unknown = uniqueEmail('tile-nobody');

    const answers = [
      await ask(pendingEmail.toUpperCase()),
      await ask(activeEmail),
      await ask(unknown),
      await ask(elsewhereEmail),
      await ask(endedEmail),
      await ask(foreignEmail),
      await ask(pendingEmail, randomUUID()),
      await ask(activeEmail, 'not-a-tile'),
    ];
    for (const res of answers) expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 202, body: sameBody });

    for (const nobody of [unknown, elsewhereEmail, endedEmail, foreignEmail]) expect(await mailsTo(nobody), nobody).toEqual([]);
    expect(await mailsTo(pendingEmail)).toHaveLength(2); // the share's invitation, then the sign-in link
    expect(await mailsTo(activeEmail)).toHaveLength(1);
    const mail = (await mailsTo(pendingEmail)).at(-1)!;
    expect(mail.subject).toBe('Your sign-in link for Partner App');
    expect(mail.html).toContain('Sign in and open the door');
    const secret = (await linkSecret(pendingEmail))!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await linkSecret(activeEmail)).not.toBeNull();
    // Stored hashed. Without SMTP (this service mails to files) the email is kept in the application's
    // Outbox for its owners, the one place it can be read; with SMTP it is not (outbox.test.ts).
    const rows = await t.database.db.select().from(tileSignInTokens).where(eq(tileSignInTokens.tileId, tileId));
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.some((r) => r.tokenHash === secret)).toBe(false);
    const outbox = await t.database.db.select({ kind: sentEmails.kind, to: sentEmails.to }).from(sentEmails).where(eq(sentEmails.applicationId, sandbox.applicationId));
    expect(outbox.filter((m) => m.kind === 'tile-sign-in').map((m) => m.to.toLowerCase())).toEqual(expect.arrayContaining([pendingEmail.toLowerCase(), activeEmail.toLowerCase()]));
  });

  it('speaks German to a German reader, and refuses a malformed address with the contract’s message', async () => {
    const { email } = await activeUser('tile-de');
    expect((await ask(email, tileId, { 'accept-language': 'de-DE' })).statusCode).toBe(202);
    const [mail] = await mailsTo(email);
    expect(mail!.subject).toBe('Ihr Anmeldelink für Partner App');
    expect(mail!.text).toContain('Anmelden und Tür öffnen');
    const bad = await ask('not-an-email');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].message).toBe('Invalid email address');
  });
});

describe('POST /tile/sign-in/verify', () => {
  it('answers a 12-hour lock-user token for the application user; the link works once; a pending user stays pending', async () => {
    const pendingEmail = await pendingUser('tile-verify');
    expect((await ask(pendingEmail)).statusCode).toBe(202);
    const secret = (await linkSecret(pendingEmail))!;
    const res = await verify(secret);
    expect(res.statusCode).toBe(200);
    const body = res.json() as TileSignInResponse;
    const [pending] = await t.database.db.select().from(applicationUsers).where(eq(applicationUsers.email, pendingEmail));
    expect(body.userId).toBe(pending!.id);
    expect(pending).toMatchObject({ status: 'pending', sub: null });
    expect(Math.abs(body.expiresAt - (Date.now() / 1000 + LOCK_USER_TOKEN_TTL_HOURS * 3600))).toBeLessThan(30);
    const claims = JSON.parse(Buffer.from(body.authToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ typ: 'lock-user', sub: pending!.id, app: sandbox.applicationId, iss: t.app.config.jwt.issuer });
    expect(JSON.parse(Buffer.from(body.authToken.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'EdDSA' });

    expect((await verify(secret)).json()).toEqual({ code: 400, message: tileErrors.signInLinkUsed });
    expect((await verify('A'.repeat(43))).json()).toEqual({ code: 400, message: tileErrors.signInLinkInvalid });
    expect((await verify('has spaces')).statusCode).toBe(400);
  });

  it('refuses an expired link; spending one link ends the user’s other open links', async () => {
    const user = await activeUser('tile-expiry');
    expect((await ask(user.email)).statusCode).toBe(202);
    const first = (await linkSecret(user.email))!;
    await t.database.db.update(tileSignInTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(tileSignInTokens.applicationUserId, user.id));
    expect((await verify(first)).json()).toEqual({ code: 400, message: tileErrors.signInLinkExpired });
    expect((await ask(user.email)).statusCode).toBe(202);
    const second = (await linkSecret(user.email))!;
    expect((await ask(user.email)).statusCode).toBe(202);
    const third = (await linkSecret(user.email))!;
    expect((await verify(third)).statusCode).toBe(200);
    expect((await verify(second)).json()).toEqual({ code: 400, message: tileErrors.signInLinkUsed });
  });
});

describe('the lock-user token', () => {
  let token: string;
  let holder: KeyHolder;
  let invited: string;
  beforeAll(async () => {
    invited = await pendingUser('tile-invited');
    ({ authToken: token } = await signIn(invited));
  });

  it('opens the tile, certifies a key without a second factor and unlocks the shared door', async () => {
    const tile = await t.app.inject({ url: `/api/tile/${tileId}`, headers: bearer(token) });
    expect(tile.statusCode).toBe(200);
    expect(tile.json()).toEqual({ siteId: sandbox.applicationId, tileId, deviceIds: [door] });
    const locks = await t.app.inject({ url: `/api/tile/${tileId}/lock`, headers: bearer(token) });
    expect(locks.json()).toEqual([expect.objectContaining({ id: door, name: 'Tile Door' })]);
    // An application user: no emailed code for a new key (that is for password accounts).
    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
    const cert = await t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey: raw } });
    expect(cert.statusCode).toBe(200);
    holder = await certify(t, token);
    const [pending] = await t.database.db.select().from(applicationUsers).where(eq(applicationUsers.email, invited));
    expect(holder.userId).toBe(pending!.id);
    expect((await execute(t, door, token, signOperation(holder, door, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
  });

  it('opens nothing else: another lock of the application, another application’s lock, owner routes, the account', async () => {
    holder ??= await certify(t, token);
    const back = await execute(t, backDoor, token, signOperation(holder, backDoor, { type: 'MUTATE_LOCK', locked: false }));
    expect(back.statusCode).toBeGreaterThanOrEqual(403);
    expect(back.statusCode).toBeLessThanOrEqual(404);
    const foreign = await execute(t, foreignLock, token, signOperation(holder, foreignLock, { type: 'MUTATE_LOCK', locked: false }));
    expect([403, 404]).toContain(foreign.statusCode);
    expect((await t.app.inject({ url: `/api/device/${foreignLock}`, headers: bearer(token) })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `/api/device/${backDoor}`, headers: bearer(token) })).statusCode).toBe(404);
    const otherTile = await t.app.inject({ method: 'POST', url: `/api/platform/application/${other.applicationId}/lock/${foreignLock}/tile`, headers: bearer(other.owner.token) });
    expect((await t.app.inject({ url: `/api/tile/${(otherTile.json() as LockTile).tileId}`, headers: bearer(token) })).statusCode).toBe(404);
    // Portal and owner routes take portal access tokens only.
    for (const url of [`/api/platform/application/${sandbox.applicationId}/lock`, `/api/platform/application/${sandbox.applicationId}`, '/api/account']) {
      const res = await t.app.inject({ url, headers: bearer(token) });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 401 });
    }
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: bearer(token) })).statusCode).toBe(401);
    // The owner's own token still reads the account.
    expect((await t.app.inject({ url: '/api/account', headers: bearer(sandbox.owner.token) })).statusCode).toBe(200);
    // A token altered in any way is refused.
    const [h, p, s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: randomUUID() })).toString('base64url')}.${s}`;
    expect((await t.app.inject({ url: `/api/tile/${tileId}`, headers: bearer(forged) })).statusCode).toBe(401);
  });

  it('is taken on the lock-user routes only, across every route of the API (never the account, an owner’s or a session’s)', async () => {
    const lockUserRoute = (method: string, url: string) =>
      url.startsWith('/api/auth/certificate') || url.startsWith('/api/device/') || url.startsWith('/api/tile/') || url === '/api/site' || url.startsWith('/api/site/') ||
      url.startsWith('/api/user/') || url.startsWith('/api/share/invite/') || (method === 'POST' && url === '/api/directory/query');
    const routes = t.app.routeTable.filter((r) => r.url.startsWith('/api') && !r.url.startsWith('/api/docs') && !r.public);
    expect(routes.filter((r) => lockUserRoute(r.method, r.url)).length).toBeGreaterThanOrEqual(10);
    const failures: string[] = [];
    for (const route of routes) {
      const url = route.url.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000').replace(/\*$/, 'x');
      const res = await injectAny(t.app, route.url, { method: route.method as 'GET', url, headers: bearer(token), ...(route.method === 'GET' ? {} : { payload: {} }) });
      if ((res.statusCode !== 401) !== lockUserRoute(route.method, route.url)) failures.push(`${route.method} ${route.url}: ${res.statusCode}`);
      if (res.statusCode >= 500) failures.push(`${route.method} ${route.url}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('rate limits', () => {
  it('per email: a few an hour, the same answer for an address with a key and one without', async () => {
    const { email } = await activeUser('tile-flood');
    for (const address of [email, uniqueEmail('tile-flood-nobody')]) {
      for (let i = 0; i < TILE_SIGN_IN_LIMITS.perEmail; i++) expect((await ask(address)).statusCode).toBe(202);
      const limited = await ask(address.toUpperCase());
      expect(limited.statusCode).toBe(429);
      expect(limited.json().message).toBe(apiErrors.tooManyAttempts);
    }
    expect(await mailsTo(email)).toHaveLength(TILE_SIGN_IN_LIMITS.perEmail);
  });

  it('per address, across emails', async () => {
    let last = 0;
    for (let i = 0; i <= TILE_SIGN_IN_LIMITS.perAddress; i++) last = (await post(`/tile/${tileId}/sign-in`, { email: uniqueEmail('spray') }, {}, '203.0.113.9')).statusCode;
    expect(last).toBe(429);
  });
});
