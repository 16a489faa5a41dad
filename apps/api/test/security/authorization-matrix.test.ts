import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers.js';
import { injectAny } from './streams.js';
import { hs256WithPublicKey, makeSigningKey, signWith, unsignedToken, type Claims } from './tokens.js';
import { addIssuer, addKey, createApplication, signUserToken } from '../fixtures/platform-users.js';
import { appUserToken, createLock, createSandbox, share } from '../fixtures/operations.js';

/** Sign-out (this session, or all of the user's): ends the owner's sessions, so it runs last. */
const SIGN_OUT = /\/token\/destroy(\/all)?$/;

/**
 * Every route of the service's own route table × every kind of credential. A new route is
 * covered the moment it is registered; one that answers without a token must be marked `public`.
 */
const key = makeSigningKey();
let t: TestApp;
let owner: { token: string; refresh: string; claims: Claims };
let stranger: { token: string; claims: Claims };
let appId: string;
/** The application's Front Door: lock routes are tried on a real lock, so the owner gets real answers. */
let lockId: string;
const APP_NAME = 'Matrix Secret Application';

/** The SDKs' people and lock-property routes that take lock users' tokens besides /device/*. */
const LOCK_USER_ROUTES_ISSUE_30 = /^(GET \/api\/user\/|POST \/api\/share\/invite\/|POST \/api\/directory\/query$)/;
/** Routes that are public by design; everything else must refuse anonymous callers. */
const DOCS = /^\/api\/docs/;

async function register(email: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'matrix-pass', displayName: 'M' } });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { authToken: string; refreshToken: string };
  const payload = JSON.parse(Buffer.from(body.authToken.split('.')[1]!, 'base64url').toString()) as Claims;
  return { token: body.authToken, refresh: body.refreshToken, claims: { sub: payload.sub, email: payload.email, sid: payload.sid } };
}

async function signIn(email: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/token', payload: { email, password: 'matrix-pass' } });
  expect(res.statusCode).toBe(200);
  return (res.json() as { authToken: string }).authToken;
}

function fill(url: string) {
  // A simulated event is a real one (the owner's answer is 204), so the route is tried as it is used.
  return url.replace(':applicationId', appId).replace(':lockId', lockId).replace(':kind', 'jammed').replace(/:(\w+)/g, 'x').replace(/\*$/, 'x');
}

beforeAll(async () => {
  t = await createTestApp({ JWT_PRIVATE_KEY: key.pem });
  owner = await register(uniqueEmail('owner'));
  stranger = await register(uniqueEmail('stranger'));
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/platform/application',
    headers: { authorization: `Bearer ${owner.token}` },
    payload: { name: APP_NAME, companyName: 'Matrix Co', mailingAddress: '1 Matrix Road' },
  });
  expect(created.statusCode).toBe(201);
  appId = created.headers.location!.toString().split('/').pop()!;
  const locks = await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/lock`, headers: { authorization: `Bearer ${owner.token}` } });
  lockId = (locks.json() as { id: string }[])[0]!.id;
});
afterAll(() => t?.close());

describe('authorization matrix', () => {
  it('holds for every route × credential', async () => {
    const now = Math.floor(Date.now() / 1000);
    const otherKey = generateKeyPairSync('ed25519').privateKey;
    const badCredentials: Record<string, string | undefined> = {
      'no token': undefined,
      'malformed token': 'not-a.jwt',
      'expired token': await signWith(key.privateKey, owner.claims, { exp: now - 60 }),
      'wrong signature': await signWith(otherKey, owner.claims),
      'alg none': unsignedToken(owner.claims),
      'HS256 with the public key': hs256WithPublicKey(owner.claims, key.publicPem),
      'refresh token as access token': owner.refresh,
      'wrong audience': await signWith(key.privateKey, owner.claims, { aud: 'someone-else' }),
    };
    const routes = t.app.routeTable.filter((r) => r.url.startsWith('/api') && !DOCS.test(r.url));
    // Destructive calls go last, so the owner's session and application survive the rest of the matrix.
    const destructive = (r: { method: string; url: string }) =>
      SIGN_OUT.test(r.url) ? 3 : r.method === 'DELETE' && r.url.endsWith(':applicationId') ? 2 : r.method === 'DELETE' && r.url.endsWith(':lockId') ? 1 : 0;
    const protectedRoutes = routes.filter((r) => !r.public).sort((x, y) => destructive(x) - destructive(y));
    expect(protectedRoutes.length).toBeGreaterThan(10);
    let cases = 0;
    const failures: string[] = [];

    for (const route of protectedRoutes) {
      const url = fill(route.url);
      const send = (token?: string) =>
        injectAny(t.app, route.url, {
          method: route.method as 'GET',
          url,
          headers: token ? { authorization: `Bearer ${token}` } : {},
          ...(route.method === 'GET' ? {} : { payload: {} }),
        });
      for (const [label, token] of Object.entries(badCredentials)) {
        const res = await send(token);
        cases++;
        if (res.statusCode !== 401) failures.push(`${route.method} ${route.url} with ${label}: ${res.statusCode}`);
        else expect(res.json()).toEqual({ code: 401, message: expect.any(String) });
      }

      // Deleting an account deletes the caller's own: a throwaway account asks, so the stranger lives on.
      const asStranger = await send(route.method === 'DELETE' && route.url === '/api/account' ? (await register(uniqueEmail('leaver'))).token : stranger.token);
      cases++;
      if (asStranger.body.includes(appId) || asStranger.body.includes(APP_NAME))
        failures.push(`${route.method} ${route.url}: a non-owner received the application's data`);
      if (route.url.includes(':applicationId') && asStranger.statusCode !== 404)
        failures.push(`${route.method} ${route.url} as non-owner: ${asStranger.statusCode} (expected 404)`);

      // A sign-out route ends the session it is called with: each gets a fresh sign-in of the owner.
      const asOwner = await send(SIGN_OUT.test(route.url) ? await signIn(owner.claims.email) : owner.token);
      cases++;
      const ownerRefused =
        asOwner.statusCode === 401 || asOwner.statusCode === 403 || asOwner.statusCode >= 500 ||
        (asOwner.statusCode === 404 && asOwner.json().message === apiErrors.applicationNotFound);
      if (ownerRefused) failures.push(`${route.method} ${route.url} as owner: ${asOwner.statusCode} ${asOwner.body}`);
    }

    // The owner's refresh token still works; none of the bad tokens logged anyone out.
    console.log(`authorization matrix: ${protectedRoutes.length} protected routes × ${Object.keys(badCredentials).length + 2} credentials = ${cases} cases`);
    expect(failures).toEqual([]);
  });

  it('takes application-signed user tokens on the lock-user routes only', async () => {
    // The first case deleted the owner's application: a partner application of its own.
    const partnerApp = await createApplication(t, stranger.claims.sub, APP_NAME);
    const issuer = 'https://matrix-backend.example';
    await addIssuer(t, partnerApp, issuer);
    const partnerKey = await addKey(t, partnerApp, 'EdDSA');
    const appToken = await signUserToken(partnerKey, { iss: issuer, sub: 'matrix-user', email: 'matrix.user@example.com' });
    const lockUserRoute = (r: { method: string; url: string }) => (r.method === 'GET' && r.url === '/api/account') || r.url.startsWith('/api/auth/certificate') || r.url.startsWith('/api/device/') || r.url.startsWith('/api/tile/') || r.url === '/api/site' || r.url.startsWith('/api/site/') || LOCK_USER_ROUTES_ISSUE_30.test(`${r.method} ${r.url}`);
    const routes = t.app.routeTable.filter((r) => r.url.startsWith('/api') && !DOCS.test(r.url) && !r.public && !SIGN_OUT.test(r.url));
    expect(routes.filter(lockUserRoute).length).toBeGreaterThanOrEqual(6);
    const failures: string[] = [];
    for (const route of routes) {
      const res = await t.app.inject({ method: route.method as 'GET', url: fill(route.url).replace(appId, partnerApp), headers: { authorization: `Bearer ${appToken}` }, ...(route.method === 'GET' ? {} : { payload: {} }) });
      const admitted = res.statusCode !== 401;
      if (admitted !== lockUserRoute(route)) failures.push(`${route.method} ${route.url}: ${res.statusCode}`);
      if (res.statusCode >= 500 || res.body.includes(APP_NAME)) failures.push(`${route.method} ${route.url}: ${res.statusCode} ${res.body.slice(0, 100)}`);
    }
    expect(failures).toEqual([]);
  });

  it('lock-user routes by standing: a user, an admin, an owner, another application’s user, no token', async () => {
    const home = await createSandbox(t);
    const away = await createSandbox(t);
    const LOCK_NAME = 'Standing Matrix Door';
    const lock = await createLock(t, home.applicationId, { name: LOCK_NAME });
    const who = async (sandbox: typeof home, sub: string) => {
      const token = await appUserToken(sandbox, sub);
      const me = await t.app.inject({ method: 'GET', url: '/api/account', headers: { authorization: `Bearer ${token}` } });
      return { token, id: (me.json() as { userId: string }).userId };
    };
    const user = await who(home, 'standing-user');
    const admin = await who(home, 'standing-admin');
    const foreigner = await who(away, 'standing-foreigner');
    await share(t, lock, user.id, { role: 'USER' });
    await share(t, lock, admin.id, { role: 'ADMIN' });
    const principals: [string, string | undefined][] = [['no token', undefined], ['another application’s user', foreigner.token], ['user', user.token], ['admin', admin.token], ['owner', home.owner.token]];
    // Admins' calls: a user of the lock is refused (403), admins and owners are answered.
    const adminOnly = /^(PUT \/api\/device\/:lockId|GET \/api\/device\/:lockId\/(users|log)|GET \/api\/user\/:userId(\/log)?|(GET|POST) \/api\/device\/:lockId\/access-code)$/;
    // Admins' calls on something of the lock that may not be there: a user of the lock is refused (403) before it is looked for.
    const adminFirst = /^DELETE \/api\/device\/:lockId\/access-code\/:accessCodeId$/;
    const routes = t.app.routeTable.filter(
      (r) => (r.url.startsWith('/api/device/') && r.url !== '/api/device/:lockId/execute') || LOCK_USER_ROUTES_ISSUE_30.test(`${r.method} ${r.url}`),
    );
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const body = (r: { url: string }) =>
      r.url === '/api/directory/query' ? { localKey: user.id } : r.url === '/api/device/:lockId' ? { settings: { hidden: true } } : r.url === '/api/device/:lockId/access-code' ? { name: 'Matrix code' } : {};
    const failures: string[] = [];
    let cases = 0;
    for (const route of routes) {
      const url = route.url
        .replace(':lockId', lock)
        .replace(':userId', user.id)
        .replace(':email', encodeURIComponent('standing-user@example.com'))
        .replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const key = `${route.method} ${route.url}`;
      for (const [label, token] of principals) {
        const res = await injectAny(t.app, route.url, {
          method: route.method as 'GET',
          url,
          headers: token ? { authorization: `Bearer ${token}`, ...(route.method === 'GET' ? {} : { 'content-type': 'application/json' }) } : {},
          ...(route.method === 'GET' ? {} : { payload: JSON.stringify(body(route)) }),
        });
        cases++;
        const s = res.statusCode;
        if (s >= 500) failures.push(`${key} as ${label}: ${s}`);
        if (label === 'no token' && s !== 401) failures.push(`${key} without a token: ${s}`);
        if (label === 'another application’s user' && (res.body.includes(lock) || res.body.includes(LOCK_NAME) || res.body.includes(user.id) || (route.url.includes(':lockId') && s < 400)))
          failures.push(`${key}: another application's user was answered (${s} ${res.body.slice(0, 80)})`);
        if ((adminOnly.test(key) || adminFirst.test(key)) && label === 'user' && s !== 403) failures.push(`${key} as a user: ${s} (expected 403)`);
        if (adminOnly.test(key) && (label === 'admin' || label === 'owner') && s >= 400) failures.push(`${key} as ${label}: ${s} ${res.body.slice(0, 80)}`);
      }
    }
    console.log(`lock-user standing matrix: ${routes.length} routes × ${principals.length} principals = ${cases} cases`);
    expect(failures).toEqual([]);
  });

  it('marks as public only routes that really need no token', () => {
    const publicRoutes = t.app.routeTable.filter((r) => r.public).map((r) => `${r.method} ${r.url}`);
    for (const r of publicRoutes) {
      expect(r).toMatch(/\/(health|ready|config)$|\/auth\/(token|register|token\/refresh|passkey|passkey\/options)$|\/account\/password\/reset\/(initialize|verify)$|^POST \/api\/tile\/(:tileId\/sign-in|sign-in\/verify)$|\/account\/email\/verify$|\/email\/preview\/|\/uploads\/|\/cdn\/|\/platform\/auth$|^GET \/\.well-known\/jwks\.json$|^POST \/api\/device-provisioning$|^GET \/api\/device-ca\/(certificate|crl)\.pem$|^GET \/downloads\/latchkey-device\.tgz$|^GET \/api\/tile\/:tileId\/branding$/);
    }
  });
});
