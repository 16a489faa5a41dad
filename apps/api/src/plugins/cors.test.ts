import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { apiErrors, WEBHOOK_DELIVERY_PAGE_SIZE, type WebhookDelivery } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { applicationCorsDomains } from '../db/schema.js';
import { addIssuer, addKey, bearer, createApplication, createOwner, signUserToken } from '../../test/fixtures/platform-users.js';
import { cachedLookup } from './cors.js';

/**
 * A partner's web app on a registered CORS domain calls the platform API from the browser with a token
 * its backend signed. Domains are registered through the real owner routes, on a real database.
 */
const PORTAL = 'https://portal.latchkey.test';
const PARTNER = 'https://app.partner.example';
const ISS = 'https://auth.partner.example';
const TTL_MS = 50;
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let userToken: string;

const AUTH = '/api/platform/auth';
const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function cors(method: 'POST' | 'DELETE', url: string, applicationId = appId, token = owner.token) {
  const res = await t.app.inject({ method, url: `/api/platform/application/${applicationId}/cors`, headers: bearer(token), payload: { url } });
  expect(res.statusCode, res.body).toBe(204);
}

const get = (url: string, origin?: string, token?: string) =>
  t.app.inject({ method: 'GET', url, headers: { ...(origin ? { origin } : {}), ...(token ? bearer(token) : {}) } });

const preflight = (url: string, origin: string, method = 'GET', headers = 'authorization') =>
  t.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

beforeAll(async () => {
  // OUTBOUND_ALLOW: a webhook can be registered on loopback (it is never called: its deliveries are inserted).
  t = await createTestApp({ PUBLIC_URL: PORTAL, OUTBOUND_ALLOW: '127.0.0.1' }, { cors: { cacheTtlMs: TTL_MS } });
  owner = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  await addIssuer(t, appId, ISS);
  const key = await addKey(t, appId, 'ES256');
  userToken = await signUserToken(key, { iss: ISS, sub: 'partner-user', email: 'kim@partner.example', aud: PORTAL }); // the audience defaults to PUBLIC_URL
  await cors('POST', PARTNER);
  // The portal's own origin registered too: same-origin requests must still get nothing.
  await cors('POST', PORTAL);
});
afterAll(() => t?.close());

describe('a registered origin', () => {
  it('gets Allow-Origin and Vary on GET /platform/auth, and no credentials', async () => {
    const res = await get(AUTH, PARTNER, userToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ applicationId: appId, sub: 'partner-user' });
    expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
    expect(res.headers.vary).toMatch(/\bOrigin\b/);
    expect(corsHeaders(res.headers).sort()).toEqual(['access-control-allow-origin', 'access-control-expose-headers']);
    expect(res.headers['access-control-expose-headers']).toBe('retry-after, location, link');
  });

  it('gets them on errors too, so the partner can read the 401', async () => {
    const res = await get(AUTH, PARTNER);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 401, message: expect.any(String) });
    expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
  });

  it('gets a 204 preflight with methods, headers and max age, before auth runs', async () => {
    for (const url of [AUTH, `${AUTH}/`, `${AUTH}?x=1`, `/api/platform/application/${appId}/user`]) {
      const res = await preflight(url, PARTNER, 'POST', 'authorization, content-type');
      expect(res.statusCode, url).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': PARTNER,
        'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE',
        'access-control-allow-headers': 'authorization, content-type, accept',
        'access-control-max-age': '600',
      });
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('matches in normalised form, both when registered and when sent', async () => {
    const res = await get(AUTH, 'https://App.Partner.Example:443/', userToken);
    expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
    await cors('POST', 'https://Shop.Partner.Example:443/checkout');
    expect((await get(AUTH, 'https://shop.partner.example', userToken)).headers['access-control-allow-origin']).toBe('https://shop.partner.example');
    expect((await preflight(AUTH, 'https://SHOP.partner.example')).statusCode).toBe(204);
  });

  it("counts any application's domains, not only the token's application", async () => {
    const other = await createOwner(t);
    const otherApp = await createApplication(t, other.userId, 'Someone Else');
    await cors('POST', 'https://elsewhere.example', otherApp, other.token);
    expect((await get(AUTH, 'https://elsewhere.example', userToken)).headers['access-control-allow-origin']).toBe('https://elsewhere.example');
  });
});

describe('a paged list, read from a registered origin', () => {
  it('exposes Link, so the partner’s script can follow the webhook delivery log to its next page', async () => {
    const base = `/api/platform/application/${appId}`;
    const created = await t.app.inject({ method: 'POST', url: `${base}/webhook`, headers: bearer(owner.token), payload: { url: 'http://127.0.0.1:9/hook', events: ['share.added'] } });
    expect(created.statusCode, created.body).toBe(201);
    const hookId = (created.json() as { id: string }).id;
    await t.database.executeSql(
      `insert into webhook_deliveries (webhook_id, application_id, event_type, payload, status, attempts, response_status, created_at, relay_after)
       select $1, $2, 'share.added', '{}'::jsonb, 'succeeded', 1, 200, now() - i * interval '1 second', null from generate_series(1, ${WEBHOOK_DELIVERY_PAGE_SIZE + 1}) i`,
      [hookId, appId],
    );

    const first = await get(`${base}/webhook/${hookId}/delivery`, PARTNER, owner.token);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['access-control-allow-origin']).toBe(PARTNER);
    // What a browser lets the page read besides the safelisted headers: Link must be among them.
    const exposed = String(first.headers['access-control-expose-headers']).split(',').map((h) => h.trim().toLowerCase());
    expect(exposed).toContain('link');
    const link = first.headers.link as string;
    expect(link).toMatch(/^<.+>; rel="next"$/);

    const next = await get(link.slice(1, link.indexOf('>')), PARTNER, owner.token);
    expect(next.statusCode, next.body).toBe(200);
    expect(next.headers['access-control-allow-origin']).toBe(PARTNER);
    expect((first.json() as WebhookDelivery[]).length + (next.json() as WebhookDelivery[]).length).toBe(WEBHOOK_DELIVERY_PAGE_SIZE + 1);
    expect(next.headers.link).toBeUndefined();
  });
});

describe('an unregistered origin', () => {
  const strangers = [
    'https://evil.example',
    'http://app.partner.example',
    'https://app.partner.example:8443',
    'https://sub.app.partner.example',
    'https://app.partner.example.evil.com',
    'null',
    'not a url',
    `https://${'a'.repeat(400)}.example`,
  ];

  it('gets no CORS headers; the request itself is answered as before', async () => {
    for (const origin of strangers) {
      const res = await get(AUTH, origin, userToken);
      expect(res.statusCode, origin).toBe(200);
      expect(corsHeaders(res.headers), origin).toEqual([]);
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
    }
  });

  it('gets a 403 { code, message } preflight without allow headers', async () => {
    for (const origin of strangers) {
      const res = await preflight(AUTH, origin);
      expect(res.statusCode, origin).toBe(403);
      expect(res.json()).toEqual({ code: 403, message: apiErrors.corsOriginNotAllowed });
      expect(corsHeaders(res.headers), origin).toEqual([]);
    }
  });
});

describe('the registry is read through a short cache', () => {
  it('a removed domain stops working once the TTL has passed, and an added one starts', async () => {
    const origin = 'https://leaving.partner.example';
    expect((await preflight(AUTH, origin)).statusCode).toBe(403);
    await cors('POST', origin);
    await sleep(TTL_MS * 2);
    expect((await get(AUTH, origin, userToken)).headers['access-control-allow-origin']).toBe(origin);
    expect((await preflight(AUTH, origin)).statusCode).toBe(204);

    await cors('DELETE', 'https://LEAVING.partner.example/');
    await sleep(TTL_MS * 2);
    expect(corsHeaders((await get(AUTH, origin, userToken)).headers)).toEqual([]);
    expect((await preflight(AUTH, origin)).statusCode).toBe(403);
  });

  it('finds origins through an index on the origin column', async () => {
    const result = await t.database.db.execute(
      sql`select indexdef from pg_indexes where tablename = ${'application_cors_domains'} and indexname = ${'application_cors_domains_origin_idx'}`,
    );
    expect((result as unknown as { rows: { indexdef: string }[] }).rows[0]?.indexdef).toMatch(/\(origin\)$/);
    expect(applicationCorsDomains.origin.name).toBe('origin');
  });
});

describe('outside its scope nothing changes', () => {
  it('same-origin portal requests get exactly the headers they got before', async () => {
    const url = '/api/platform/application';
    const plain = await get(url, undefined, owner.token);
    const sameOrigin = await get(url, PORTAL, owner.token);
    expect(sameOrigin.statusCode).toBe(200);
    expect(Object.keys(sameOrigin.headers).sort()).toEqual(Object.keys(plain.headers).sort());
    expect(sameOrigin.headers.vary).toBeUndefined();
    expect(sameOrigin.headers['content-security-policy']).toBe(plain.headers['content-security-policy']);
    expect((await get(AUTH, 'https://Portal.Latchkey.test:443', userToken)).headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight(AUTH, PORTAL)).statusCode).toBe(404);
  });

  it("the portal's auth and account routes, health, docs, /cdn and the SPA get no CORS headers", async () => {
    const paths = ['/api/health', '/api/account', '/api/docs/json', '/api/platformx', '/cdn/logos/x.png', '/', '/applications'];
    for (const url of paths) {
      const res = await get(url, PARTNER, owner.token);
      expect(corsHeaders(res.headers), url).toEqual([]);
      expect(res.headers.vary, url).toBeUndefined();
    }
    const login = await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { origin: PARTNER }, payload: { email: 'x@example.com', password: 'wrong-password' } });
    expect(corsHeaders(login.headers)).toEqual([]);
    for (const url of ['/api/auth/token', '/api/account', '/cdn/logos/x.png']) {
      const res = await preflight(url, PARTNER, 'POST');
      expect(res.statusCode, url).toBe(404);
      expect(corsHeaders(res.headers), url).toEqual([]);
    }
  });

  it('keeps the helmet headers on CORS answers, and adds no route', async () => {
    const plain = await get(AUTH, undefined, userToken);
    for (const res of [await get(AUTH, PARTNER, userToken), await preflight(AUTH, PARTNER)]) {
      for (const h of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'strict-transport-security', 'cross-origin-resource-policy']) {
        expect(res.headers[h], h).toBe(plain.headers[h]);
        expect(res.headers[h], h).toBeDefined();
      }
    }
    expect(t.app.routeTable.filter((r) => r.method === 'OPTIONS')).toEqual([]);
  });
});

describe('rate-limited answers', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ PUBLIC_URL: PORTAL, ANONYMOUS_RATE_LIMIT_MAX: '2' });
    const { userId } = await createOwner(limited);
    const id = await createApplication(limited, userId);
    await limited.database.db.insert(applicationCorsDomains).values({ applicationId: id, origin: PARTNER });
  });
  afterAll(() => limited?.close());

  it('carry the CORS headers, so the partner can read the 429 and its Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await limited.app.inject({ method: 'GET', url: AUTH, headers: { origin: PARTNER } });
      statuses.push(res.statusCode);
      expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
    }
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('cachedLookup', () => {
  function counting(answer: (key: string) => Promise<boolean> = async () => true) {
    const calls: string[] = [];
    return { calls, lookup: (key: string) => (calls.push(key), answer(key)) };
  }

  it('reuses an answer within the TTL and asks again after it', async () => {
    let clock = 1_000;
    const { calls, lookup } = counting();
    const cached = cachedLookup(lookup, { ttlMs: 5_000, maxEntries: 10, now: () => clock });
    await cached('a');
    clock += 4_999;
    await cached('a');
    expect(calls).toEqual(['a']);
    clock += 1;
    await cached('a');
    expect(calls).toEqual(['a', 'a']);
  });

  it('shares one lookup between concurrent misses, forgets failures, and honours ttl 0', async () => {
    const { calls, lookup } = counting(async (key) => {
      if (key === 'down') throw new Error('database down');
      return true;
    });
    const cached = cachedLookup(lookup, { ttlMs: 5_000, maxEntries: 10, now: () => 0 });
    await Promise.all([cached('a'), cached('a'), cached('a')]);
    expect(calls).toEqual(['a']);
    await expect(cached('down')).rejects.toThrow('database down');
    await expect(cached('down')).rejects.toThrow('database down');
    expect(calls).toEqual(['a', 'down', 'down']);

    const uncached = counting();
    const every = cachedLookup(uncached.lookup, { ttlMs: 0, maxEntries: 10 });
    await every('a');
    await every('a');
    expect(uncached.calls).toEqual(['a', 'a']);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const { calls, lookup } = counting();
    const cached = cachedLookup(lookup, { ttlMs: 5_000, maxEntries: 2, now: () => 0 });
    for (const key of ['a', 'b', 'c', 'b', 'c', 'a']) await cached(key);
    expect(calls).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('the SDK’s routes, called from a partner’s page with its users’ tokens', () => {
  const LOCK = '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b';
  const TILE = '7d2c1e0f-3b4a-4e6f-8a9b-0c1d2e3f4a5b';
  const FAVOURITES = '/api/device/favourite';
  // What the JavaScript SDK sends (doordeck-sdk-javascript: certificate.js, deviceOperation.js), and a
  // few of the headless SDK's reads.
  const sdkCalls: [string, string][] = [
    ['POST', '/api/auth/certificate'],
    ['POST', '/api/auth/certificate/verify'],
    ['POST', '/api/auth/certificate/check'],
    ['POST', `/api/device/${LOCK}/execute`],
    ['GET', `/api/device/${LOCK}`],
    ['PUT', `/api/device/${LOCK}/tile/${TILE}`],
    ['DELETE', `/api/device/${LOCK}/tile/${TILE}`],
    ['GET', `/api/tile/${TILE}`],
    ['POST', '/api/share/invite/kim@partner.example'],
    ['POST', '/api/directory/query'],
    ['GET', `/api/device/${LOCK}/users`],
    ['GET', FAVOURITES],
  ];
  const sdkGet = (url: string, origin: string, token: string) => t.app.inject({ method: 'GET', url, headers: { origin, ...bearer(token) } });

  it('a registered origin’s preflight of each of them is answered 204 with the methods and headers the SDKs send', async () => {
    for (const [method, url] of sdkCalls) {
      const res = await preflight(url, PARTNER, method, 'authorization, content-type');
      expect(res.statusCode, `${method} ${url}`).toBe(204);
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': PARTNER,
        'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE',
        'access-control-allow-headers': 'authorization, content-type, accept',
      });
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
    }
  });

  it('an application user’s call from an origin their application lists is answered, with Allow-Origin', async () => {
    const res = await sdkGet(FAVOURITES, PARTNER, userToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
    expect(res.headers['access-control-expose-headers']).toBe('retry-after, location, link');
    expect(res.headers.vary).toMatch(/\bOrigin\b/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // A 401 is readable there too.
    const anonymous = await t.app.inject({ method: 'GET', url: FAVOURITES, headers: { origin: PARTNER } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['access-control-allow-origin']).toBe(PARTNER);
  });

  it('is refused before the route for an origin only another application lists, and for a portal token', async () => {
    const other = await createOwner(t);
    const otherApp = await createApplication(t, other.userId, 'Another Partner');
    await cors('POST', 'https://another.partner.example', otherApp, other.token);
    const elsewhere = await sdkGet(FAVOURITES, 'https://another.partner.example', userToken);
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.json()).toEqual({ code: 403, message: apiErrors.corsOriginNotOfApplication });
    // The portal's owners sign in on the portal, not on a partner's page.
    const portalToken = await sdkGet(FAVOURITES, PARTNER, owner.token);
    expect(portalToken.statusCode).toBe(403);
    expect(portalToken.json()).toEqual({ code: 403, message: apiErrors.corsOriginNotOfApplication });
    // Nothing ran: an unlock from there is refused before its operation is read.
    const unlock = await t.app.inject({ method: 'POST', url: `/api/device/${LOCK}/execute`, headers: { origin: 'https://another.partner.example', 'content-type': 'application/json', ...bearer(userToken) }, payload: '"not.a.jws"' });
    expect(unlock.statusCode).toBe(403);
  });

  it('an origin no application lists gets no CORS headers and a 403 preflight, so a browser never sends it a token', async () => {
    for (const origin of ['https://evil.example', 'http://app.partner.example', 'null']) {
      // What no browser sends without a preflight (a bearer token) is answered as before, unreadable there.
      const res = await sdkGet(FAVOURITES, origin, userToken);
      expect(res.statusCode, origin).toBe(200);
      expect(corsHeaders(res.headers), origin).toEqual([]);
      const pre = await preflight(`/api/device/${LOCK}/execute`, origin, 'POST', 'authorization, content-type');
      expect(pre.statusCode, origin).toBe(403);
      expect(corsHeaders(pre.headers), origin).toEqual([]);
    }
  });

  it('the portal calls them same-origin, with no CORS headers and no origin check', async () => {
    const plain = await get(FAVOURITES, undefined, owner.token);
    const sameOrigin = await get(FAVOURITES, PORTAL, owner.token);
    expect(sameOrigin.statusCode, sameOrigin.body).toBe(200);
    expect(Object.keys(sameOrigin.headers).sort()).toEqual(Object.keys(plain.headers).sort());
    expect(corsHeaders(sameOrigin.headers)).toEqual([]);
  });

  it('the portal’s own routes that take no application user’s token stay same-origin', async () => {
    for (const [method, url] of [['GET', '/api/account'], ['POST', '/api/auth/token'], ['POST', '/api/auth/refresh'], ['POST', `/api/tile/${TILE}/sign-in`]] as const) {
      const pre = await preflight(url, PARTNER, method);
      expect(pre.statusCode, `${method} ${url}`).toBe(404);
      expect(corsHeaders(pre.headers), url).toEqual([]);
    }
    const account = await get('/api/account', PARTNER, userToken);
    expect(account.statusCode).toBe(200);
    expect(corsHeaders(account.headers)).toEqual([]);
  });
});
