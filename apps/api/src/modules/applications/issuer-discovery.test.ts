import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { discoveryErrors, outboundErrors, platformUserErrors, type Application, type TokenCheckReport } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { applicationIssuers } from '../../db/schema.js';
import { JWKS_FAILURE_TTL_SECONDS, JWKS_MAX_TTL_SECONDS } from '../../lib/issuer-keys.js';
import { addKey, bearer, createApplication, createOwner, signUserToken, type SigningKey } from '../../../test/fixtures/platform-users.js';

/**
 * Auth domains with discovery, against a local OpenID provider (node http on loopback, let
 * through by OUTBOUND_ALLOW) on a real database. Every bad answer is a 4xx with the contract's message
 * and stores nothing; a good one lets tokens signed with the issuer's keys in, and the tester says so.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let server: http.Server;
let base: string;
const hits: Record<string, number> = {};
/** Key sets the provider serves, per tenant; tests change them. */
const keySets: Record<string, { keys: unknown[] }> = {};
let jwksStatus = 200;
/** Per tenant: the configuration it serves now, instead of the default one; tests change it. */
const configs: Record<string, (res: http.ServerResponse, issuer: string) => void> = {};
let issuerKey: SigningKey;
let movedKey: SigningKey;
let uploaded: SigningKey;

const json = (res: http.ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    const [, tenant, rest] = /^\/([^/]+)(\/.*)$/.exec(path) ?? [];
    const issuer = `${base}/${tenant}`;
    if (rest === '/.well-known/openid-configuration') {
      if (configs[tenant!]) return configs[tenant!]!(res, issuer);
      switch (tenant) {
        case 'mismatch':
          return json(res, { issuer: `${issuer}/`, jwks_uri: `${issuer}/jwks` });
        case 'no-jwks':
          return json(res, { issuer });
        case 'not-json':
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end('<html>login</html>');
        case 'array':
          return json(res, [issuer]);
        case 'private-jwks':
          return json(res, { issuer, jwks_uri: 'https://10.0.0.7/jwks' });
        case 'http-jwks':
          return json(res, { issuer, jwks_uri: 'http://example.com/jwks' });
        case 'missing':
          res.writeHead(404);
          return res.end();
        case 'big':
          return json(res, { issuer, jwks_uri: `${issuer}/jwks`, padding: 'x'.repeat(300 * 1024) });
        case 'slow': {
          const timer = setTimeout(() => json(res, { issuer, jwks_uri: `${issuer}/jwks` }), 3000);
          res.on('close', () => clearTimeout(timer));
          return;
        }
        default:
          return json(res, { issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/authorize` });
      }
    }
    if (rest === '/jwks-2') return json(res, { keys: [movedKey.publicJwk] }, { 'cache-control': 'max-age=300' });
    if (rest === '/jwks') {
      if (tenant === 'bad-jwks') return json(res, { keys: 'none' });
      if (tenant === 'no-sig-keys') return json(res, { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'sym' }, { ...issuerKey.publicJwk, use: 'enc' }] });
      if (tenant === 'big-jwks') return json(res, { keys: [], padding: 'x'.repeat(300 * 1024) });
      if (jwksStatus !== 200) {
        res.writeHead(jwksStatus);
        return res.end();
      }
      return json(res, keySets[tenant!] ?? { keys: [issuerKey.publicJwk] }, { 'cache-control': 'public, max-age=300' });
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp({ OUTBOUND_ALLOW: '127.0.0.1' });
  owner = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  issuerKey = await addKey(t, appId, 'ES256', { kid: 'issuer-key-1', register: false });
  uploaded = await addKey(t, appId, 'RS256', { kid: 'uploaded-1' });
  movedKey = await addKey(t, appId, 'ES256', { kid: 'issuer-key-2', register: false });
});

afterAll(async () => {
  await t?.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  for (const k of Object.keys(hits)) delete hits[k];
  jwksStatus = 200;
  for (const k of Object.keys(configs)) delete configs[k];
  t.app.issuers.clear();
});

const addIssuer = (url: string, discovery = true, applicationId = appId) =>
  t.app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/auth/issuer`, headers: bearer(owner.token), payload: { url, discovery } });
const removeIssuer = (url: string) =>
  t.app.inject({ method: 'DELETE', url: `/api/platform/application/${appId}/auth/issuer`, headers: bearer(owner.token), payload: { url } });
const getApp = async () =>
  (await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}`, headers: bearer(owner.token) })).json() as Application;
const platformAuth = (token: string) => t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(token) });
const tokenCheck = async (token: string) =>
  (await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/token-check`, headers: bearer(owner.token), payload: { token } })).json() as TokenCheckReport;
const storedIssuers = async () => t.database.db.select().from(applicationIssuers).where(eq(applicationIssuers.applicationId, appId));

describe('adding an auth domain with discovery', () => {
  it('stores the issuer with its jwks_uri; tokens signed with the key set verify, and the tester names the source', async () => {
    const issuer = `${base}/tenant-a`;
    const res = await addIssuer(issuer);
    expect(res.statusCode, res.body).toBe(204);
    expect(hits['/tenant-a/.well-known/openid-configuration']).toBe(1);
    expect(hits['/tenant-a/jwks']).toBe(1);
    const app = await getApp();
    expect(app.authDomains).toContain(issuer);
    expect(app.authDomainDiscovery).toEqual({ [issuer]: { jwksUri: `${issuer}/jwks` } });
    // The history keeps where the keys come from, beside the auth domain.
    const history = (await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/history?kind=issuer`, headers: bearer(owner.token) })).json() as {
      items: { changes: { field: string; before: unknown; after: unknown }[] }[];
    };
    expect(history.items[0]!.changes).toEqual([
      { field: 'authDomains', before: null, after: issuer },
      { field: 'authDomainDiscovery', before: null, after: { jwksUri: `${issuer}/jwks` } },
    ]);

    const token = await signUserToken(issuerKey, { iss: issuer, sub: 'disc-1', email: 'disc@partner.example' });
    const auth = await platformAuth(token);
    expect(auth.statusCode, auth.body).toBe(200);
    expect(auth.json()).toMatchObject({ applicationId: appId, sub: 'disc-1' });
    const report = await tokenCheck(token);
    expect(report.valid).toBe(true);
    expect(report.keySource).toEqual({ type: 'issuer', kid: 'issuer-key-1', jwksUri: `${issuer}/jwks` });
    expect(report.checks.find((c) => c.id === 'key')?.message).toMatch(/issuer's key set/);
    // The key set that discovery loaded is cached (max-age 300): no further call for either token.
    expect(hits['/tenant-a/jwks']).toBe(1);

    // Uploaded keys still verify on the same issuer, and the tester says which.
    const own = await signUserToken(uploaded, { iss: issuer, sub: 'disc-2' });
    expect((await platformAuth(own)).statusCode).toBe(200);
    expect((await tokenCheck(own)).keySource).toEqual({ type: 'uploaded', kid: 'uploaded-1' });
  });

  it('reloads an evicted key set once, then serves it from the cache', async () => {
    const issuer = `${base}/tenant-b`;
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    t.app.issuers.keys.clear();
    const token = await signUserToken(issuerKey, { iss: issuer, sub: 'b-1' });
    for (let i = 0; i < 3; i += 1) expect((await platformAuth(token)).statusCode).toBe(200);
    expect(hits['/tenant-b/jwks']).toBe(2);
  });

  it('a kid in neither place fails the key check, naming both', async () => {
    const issuer = `${base}/tenant-c`;
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    const stranger = await addKey(t, appId, 'ES256', { kid: 'nobody', register: false });
    const report = await tokenCheck(await signUserToken(stranger, { iss: issuer }));
    expect(report.valid).toBe(false);
    expect(report.keySource).toBeNull();
    expect(report.error).toBe("No key with kid nobody is registered on the application or in the issuer's key set");
    expect((await platformAuth(await signUserToken(stranger, { iss: issuer }))).statusCode).toBe(401);
  });

  it('an issuer whose key set stops answering fails the key check with the reason', async () => {
    const issuer = `${base}/tenant-d`;
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    t.app.issuers.keys.clear();
    jwksStatus = 500;
    const token = await signUserToken(issuerKey, { iss: issuer });
    const res = await platformAuth(token);
    expect(res.statusCode).toBe(401);
    // Outsiders learn nothing of the issuer; the owner's tester gives the reason.
    expect(res.json().message).toBe(platformUserErrors.tokenNotVerified);
    // Discovery's load, then the failed one; the failure is remembered briefly: a second token costs no call.
    expect(hits['/tenant-d/jwks']).toBe(2);
    await platformAuth(token);
    expect(hits['/tenant-d/jwks']).toBe(2);
    expect((await tokenCheck(token)).error).toContain('could not be loaded');
  });

  it('removing the auth domain stops its keys verifying', async () => {
    const issuer = `${base}/tenant-e`;
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    const token = await signUserToken(issuerKey, { iss: issuer, sub: 'e-1' });
    expect((await platformAuth(token)).statusCode).toBe(200);
    expect((await removeIssuer(issuer)).statusCode).toBe(204);
    expect((await platformAuth(token)).statusCode).toBe(401);
    expect((await getApp()).authDomainDiscovery).not.toHaveProperty(issuer);
  });

  it('without discovery nothing is fetched (the existing behaviour)', async () => {
    const issuer = `${base}/plain`;
    expect((await addIssuer(issuer, false)).statusCode).toBe(204);
    expect(hits).toEqual({});
    expect((await getApp()).authDomainDiscovery).not.toHaveProperty(issuer);
  });

  it('an issuer taken by another application is refused before any call', async () => {
    const other = await createApplication(t, owner.userId, 'Other');
    const issuer = `${base}/taken`;
    expect((await addIssuer(issuer, false, other)).statusCode).toBe(204);
    const res = await addIssuer(issuer);
    expect(res.statusCode).toBe(409);
    expect(hits).toEqual({});
  });
});

describe('bad input: a clear 4xx with the contract message, nothing stored', () => {
  const cases: [string, () => string, number, string][] = [
    ['plain http', () => 'http://example.com/tenant', 400, outboundErrors.notHttps],
    ['a private address', () => 'https://10.1.2.3/tenant', 400, outboundErrors.privateAddress],
    ['loopback by name', () => 'https://localhost/tenant', 400, outboundErrors.privateAddress],
    ['cloud metadata', () => 'https://169.254.169.254/latest', 400, outboundErrors.privateAddress],
    ['no configuration (404)', () => `${base}/missing`, 422, discoveryErrors.configNotFound],
    ['a configuration that is not JSON', () => `${base}/not-json`, 422, discoveryErrors.configNotJson],
    ['a configuration that is a JSON array', () => `${base}/array`, 422, discoveryErrors.configNotJson],
    ['an issuer that differs (trailing slash)', () => `${base}/mismatch`, 422, discoveryErrors.issuerMismatch],
    ['no jwks_uri', () => `${base}/no-jwks`, 422, discoveryErrors.jwksUriMissing],
    ['a jwks_uri on a private address', () => `${base}/private-jwks`, 422, discoveryErrors.jwksUriRefused],
    ['a jwks_uri over http', () => `${base}/http-jwks`, 422, discoveryErrors.jwksUriRefused],
    ['a key set that is not one', () => `${base}/bad-jwks`, 422, discoveryErrors.jwksInvalid],
    ['a key set without signing keys', () => `${base}/no-sig-keys`, 422, discoveryErrors.jwksNoKeys],
    ['an oversize configuration', () => `${base}/big`, 422, outboundErrors.tooLarge],
    ['an oversize key set', () => `${base}/big-jwks`, 422, discoveryErrors.jwksUnavailable],
  ];
  it.each(cases)('%s', async (_name, url, status, message) => {
    const before = await storedIssuers();
    const res = await addIssuer(url());
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json()).toEqual({ code: status, message });
    expect(await storedIssuers()).toEqual(before);
  });

  it('a slow configuration: 422 within the deadline', async () => {
    const limits = t.app.issuers.limits;
    const saved = limits.timeoutMs;
    limits.timeoutMs = 300;
    try {
      const started = Date.now();
      const res = await addIssuer(`${base}/slow`);
      expect(res.statusCode).toBe(422);
      expect(res.json().message).toBe(outboundErrors.timeout);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      limits.timeoutMs = saved;
    }
    expect((await storedIssuers()).map((r) => r.url)).not.toContain(`${base}/slow`);
  });

  it('malformed URLs and a non-boolean flag: 400 by the schema', async () => {
    for (const payload of [{ url: 'not a url', discovery: true }, { url: '', discovery: true }, { url: `${base}/x`, discovery: 'yes' }]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/issuer`, headers: bearer(owner.token), payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 400 });
    }
    expect(hits).toEqual({});
  });
});

/** The discovery caches' clock moves; the tokens' own times do not (they are checked against the wall clock). */
const advance = (seconds: number) => (t.app.issuers.clock.skewMs += seconds * 1000);
const keyCheck = (report: TokenCheckReport) => report.checks.find((c) => c.id === 'key')!.message;

describe('the OpenID configuration is read again when it expires', () => {
  // The caches' clock moves only by advance(): the time a test takes itself never expires an entry early.
  let running: () => number;
  beforeEach(() => {
    running = t.app.issuers.clock.now;
    const pinned = performance.now();
    t.app.issuers.clock.now = () => pinned + t.app.issuers.clock.skewMs;
  });
  afterEach(() => {
    t.app.issuers.clock.now = running;
  });
  it('follows a moved jwks_uri after the configuration’s max-age: the new keys verify, the old ones stop', async () => {
    const issuer = `${base}/moving`;
    configs.moving = (res) => json(res, { issuer, jwks_uri: `${issuer}/jwks` }, { 'cache-control': 'max-age=120' });
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    const before = await signUserToken(issuerKey, { iss: issuer, sub: 'm-1' });
    const after = await signUserToken(movedKey, { iss: issuer, sub: 'm-2' });
    expect((await platformAuth(before)).statusCode).toBe(200);

    configs.moving = (res) => json(res, { issuer, jwks_uri: `${issuer}/jwks-2` }, { 'cache-control': 'max-age=120' });
    advance(119);
    expect((await platformAuth(after)).statusCode).toBe(401);
    expect(hits['/moving/.well-known/openid-configuration']).toBe(1);

    advance(1);
    const res = await platformAuth(after);
    expect(res.statusCode, res.body).toBe(200);
    expect(hits['/moving/.well-known/openid-configuration']).toBe(2);
    expect(hits['/moving/jwks-2']).toBe(1);
    const report = await tokenCheck(after);
    expect(report.valid).toBe(true);
    expect(report.keySource).toEqual({ type: 'issuer', kid: 'issuer-key-2', jwksUri: `${issuer}/jwks-2` });
    expect(keyCheck(report)).toBe(`Key issuer-key-2 (EC P-256) found in the issuer's key set ${issuer}/jwks-2`);
    expect((await platformAuth(before)).statusCode).toBe(401);
    // No database write: what the owner added stays as it was.
    expect((await storedIssuers()).find((r) => r.url === issuer)?.jwksUri).toBe(`${issuer}/jwks`);
  });

  const broken: [string, string, (res: http.ServerResponse, issuer: string) => void, string][] = [
    ['names another issuer', 'turning-1', (res, issuer) => json(res, { issuer: `${issuer}/`, jwks_uri: `${issuer}/jwks-2` }), discoveryErrors.issuerMismatch],
    ['has no jwks_uri', 'turning-2', (res, issuer) => json(res, { issuer }), discoveryErrors.jwksUriMissing],
    ['is not JSON', 'turning-3', (res) => (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html>maintenance</html>')), discoveryErrors.configNotJson],
    ['is gone', 'turning-4', (res) => (res.writeHead(404), res.end()), discoveryErrors.configNotFound],
    ['redirects to a private address (the guard refuses)', 'turning-5', (res) => (res.writeHead(302, { location: 'http://10.0.0.7/.well-known/openid-configuration' }), res.end()), outboundErrors.badRedirect],
    ['moves jwks_uri to a private address (the guard refuses)', 'turning-6', (res, issuer) => json(res, { issuer, jwks_uri: 'https://10.0.0.7/jwks' }), discoveryErrors.jwksUriRefused],
  ];
  it.each(broken)('a configuration that %s: the last good jwks_uri keeps verifying, the tester and the log say why', async (_name, tenant, serve, reason) => {
    const issuer = `${base}/${tenant}`;
    expect((await addIssuer(issuer)).statusCode).toBe(204);
    const token = await signUserToken(issuerKey, { iss: issuer, sub: 't-1' });
    configs[tenant] = serve;
    advance(10 * 60); // the default configuration answer has no Cache-Control: kept 10 minutes
    const warn = vi.spyOn(t.app.log, 'warn');
    try {
      expect((await platformAuth(token)).statusCode).toBe(200);
      expect(warn).toHaveBeenCalledWith(expect.objectContaining({ issuer, jwksUri: `${issuer}/jwks`, problem: reason }), expect.stringMatching(/last good jwks_uri/));
    } finally {
      warn.mockRestore();
    }
    const report = await tokenCheck(token);
    expect(report.valid).toBe(true);
    expect(report.keySource).toEqual({ type: 'issuer', kid: 'issuer-key-1', jwksUri: `${issuer}/jwks`, configProblem: reason });
    expect(keyCheck(report)).toBe(
      `Key issuer-key-1 (EC P-256) found in the issuer's key set ${issuer}/jwks (the last good one: the OpenID configuration cannot be used now — ${reason})`,
    );
    // The failure is remembered: one read per JWKS_FAILURE_TTL_SECONDS, not one per token.
    expect(hits[`/${tenant}/.well-known/openid-configuration`]).toBe(2);
    advance(JWKS_FAILURE_TTL_SECONDS);
    expect((await platformAuth(token)).statusCode).toBe(200);
    expect(hits[`/${tenant}/.well-known/openid-configuration`]).toBe(3);

    // The last good read (when the domain was added) ages out at the max TTL: then the reason is the error.
    advance(JWKS_MAX_TTL_SECONDS);
    const refused = await platformAuth(token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe(platformUserErrors.tokenNotVerified);
    const failed = await tokenCheck(token);
    expect(failed.valid).toBe(false);
    expect(failed.error).toBe(`No uploaded key has kid issuer-key-1, and ${discoveryErrors.configExpired.charAt(0).toLowerCase()}${discoveryErrors.configExpired.slice(1)}: ${reason}`);
    expect(failed.keySource).toBeNull();
    expect(keyCheck(failed)).toContain(reason);
  });

  it('the configuration’s own cache headers decide, within bounds: no-store is read again after the minimum, a year’s max-age after a day', async () => {
    const cases: [string, string, number][] = [
      ['no-store', 'no-store', 60],
      ['a-year', 'public, max-age=31536000', JWKS_MAX_TTL_SECONDS],
    ];
    for (const [tenant, cacheControl, seconds] of cases) {
      const issuer = `${base}/${tenant}`;
      configs[tenant] = (res) => json(res, { issuer, jwks_uri: `${issuer}/jwks` }, { 'cache-control': cacheControl });
      expect((await addIssuer(issuer)).statusCode).toBe(204);
      const token = await signUserToken(issuerKey, { iss: issuer });
      const reads = () => hits[`/${tenant}/.well-known/openid-configuration`];
      advance(seconds - 1);
      expect((await platformAuth(token)).statusCode).toBe(200);
      expect(reads(), tenant).toBe(1);
      advance(1);
      expect((await platformAuth(token)).statusCode).toBe(200);
      expect(reads(), tenant).toBe(2);
    }
  });
});
