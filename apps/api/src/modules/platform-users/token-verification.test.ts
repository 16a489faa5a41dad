import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformUserErrors, type TokenCheckReport } from '@latchkey/contract';
import { applicationKeys } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import {
  addIssuer,
  addKey,
  bearer,
  createApplication,
  createOwner,
  hs256WithPublicKey,
  signUserToken,
  unsignedToken,
  type KeyKind,
  type SigningKey,
} from '../../../test/fixtures/platform-users.js';

/** Every way an application-signed token can fail, through GET /platform/auth and the tester. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let otherAppId: string;
let rsa: SigningKey;
let otherAppKey: SigningKey;
const ISS = 'https://auth.partner.example';
const OTHER_ISS = 'https://auth.other.example';
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  otherAppId = await createApplication(t, owner.userId, 'Other App');
  await addIssuer(t, appId, ISS);
  await addIssuer(t, otherAppId, OTHER_ISS);
  rsa = await addKey(t, appId, 'RS256');
  otherAppKey = await addKey(t, otherAppId, 'ES256');
});
afterAll(() => t?.close());

const platformAuth = (token: string) => t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(token) });
const tokenCheck = (token: string, applicationId = appId) =>
  t.app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/auth/token-check`, headers: bearer(owner.token), payload: { token } });

/**
 * GET /platform/auth answers 401; the owner's tester names the failing check with `message`. An outsider
 * reads `message` too, except for the issuer, key, algorithm and signature checks: those all read
 * `platformUserErrors.tokenNotVerified`, so whether an issuer or a kid is registered stays unknown.
 */
const UNDISCLOSED = new Set(['issuer', 'key', 'algorithm', 'signature']);
async function expectRefused(token: string, message: RegExp, failingCheck: string) {
  const res = await platformAuth(token);
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ code: 401, message: UNDISCLOSED.has(failingCheck) ? platformUserErrors.tokenNotVerified : expect.stringMatching(message) });
  const check = await tokenCheck(token);
  expect(check.statusCode).toBe(200);
  const report = check.json() as TokenCheckReport;
  expect(report.valid).toBe(false);
  expect(report.error).toMatch(message);
  expect(report.checks.find((c) => c.status === 'fail')?.id).toBe(failingCheck);
}

describe('GET /platform/auth accepts every supported key type', () => {
  const kinds: KeyKind[] = ['RS256', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA', 'ES256K'];
  for (const kind of kinds) {
    it(kind, async () => {
      const key = await addKey(t, appId, kind);
      const res = await platformAuth(await signUserToken(key, { iss: ISS, sub: `sub-${kind}`, email: `${kind}@Partner.example`, name: 'Kim' }));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ applicationId: appId, sub: `sub-${kind}`, email: `${kind.toLowerCase()}@partner.example`, displayName: 'Kim' });
    });
  }

  it('drops a name or email that the contract text rule refuses (bidi and control characters, line breaks), still signing the user in', async () => {
    for (const [i, c] of ['\u202E', '\u2066', '\u0000', '\u0007', '\u2028', '\u0085'].entries()) {
      const res = await platformAuth(await signUserToken(rsa, { iss: ISS, sub: `sub-hostile-${i}`, email: `user6${c}@example.com`, name: `Kim${c}moc.elpmaxe` }));
      expect(res.statusCode, JSON.stringify(c)).toBe(200);
      expect(res.json(), JSON.stringify(c)).toEqual({ applicationId: appId, sub: `sub-hostile-${i}`, email: null, displayName: null });
    }
    const fine = await platformAuth(await signUserToken(rsa, { iss: ISS, sub: 'sub-fine', email: 'Kim.Lee@Example.com', name: '  Kim Lee  ' }));
    expect(fine.json()).toEqual({ applicationId: appId, sub: 'sub-fine', email: 'kim.lee@example.com', displayName: 'Kim Lee' });
  });

  it('accepts an RSA key with PS256 too, and tokens within the leeway', async () => {
    const token = await signUserToken(rsa, { iss: ISS, alg: 'PS256', exp: now() - 10 });
    expect((await platformAuth(token)).statusCode).toBe(200);
  });
});

describe('GET /platform/auth refuses (the tester names the failing check)', () => {
  it('without a bearer token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/platform/auth' });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/Authorization: Bearer/);
  });

  it('not a JWT, or an encrypted one', async () => {
    await expectRefused('not-a.jwt', /Not a JWT/, 'decode');
    await expectRefused('a.b.c.d.e', /encrypted token/, 'decode');
  });

  it('unknown issuer', async () => {
    await expectRefused(await signUserToken(rsa, { iss: 'https://unknown.example' }), /Issuer https:\/\/unknown\.example is not registered/, 'issuer');
  });

  // Compared in the RFC 3986 normal form — `${ISS}/` is the same issuer (issuer-normal-form.test.ts), another path is not.
  it('issuer differing by its path', async () => {
    await expectRefused(await signUserToken(rsa, { iss: `${ISS}/tenant` }), /is not registered/, 'issuer');
  });

  it('an issuer or kid Postgres cannot store (NUL byte) is refused, not a 500', async () => {
    await expectRefused(await signUserToken(rsa, { iss: `${ISS}\u0000` }), /is not registered/, 'issuer');
    await expectRefused(await signUserToken(rsa, { iss: ISS, kid: 'k\u0000' }), /No key with this kid/, 'key');
  });

  it('unknown kid, including a key registered on another application', async () => {
    await expectRefused(await signUserToken(rsa, { iss: ISS, kid: 'no-such-kid' }), /No key with kid no-such-kid/, 'key');
    await expectRefused(await signUserToken(otherAppKey, { iss: ISS }), new RegExp(`No key with kid ${otherAppKey.kid}`), 'key');
  });

  it('wrong algorithm: an RSA key but the token says ES256', async () => {
    const ec = await addKey(t, appId, 'ES256', { register: false });
    await expectRefused(await signUserToken(ec, { iss: ISS, kid: rsa.kid }), /Algorithm ES256 does not fit this RSA key/, 'algorithm');
  });

  it('wrong algorithm: HS256 signed with the public key', async () => {
    await expectRefused(hs256WithPublicKey(rsa, { iss: ISS }), /Symmetric algorithms \(HS256\) are never accepted/, 'algorithm');
  });

  it('wrong algorithm: alg none', async () => {
    await expectRefused(unsignedToken(rsa.kid, { iss: ISS }), /alg none/, 'algorithm');
  });

  it('wrong algorithm: the key is pinned to RS256 but the token says PS256', async () => {
    const pinned = await addKey(t, appId, 'RS256', { jwkAlg: 'RS256' });
    await expectRefused(await signUserToken(pinned, { iss: ISS, alg: 'PS256' }), /registered for RS256 only/, 'algorithm');
  });

  it('bad signature: signed by another private key under the registered kid', async () => {
    const impostor = await addKey(t, appId, 'RS256', { register: false });
    await expectRefused(await signUserToken(impostor, { iss: ISS, kid: rsa.kid }), new RegExp(`signature does not match key ${rsa.kid}`), 'signature');
  });

  it('bad signature: claims changed after signing', async () => {
    const [h, , s] = (await signUserToken(rsa, { iss: ISS, sub: 'alice' })).split('.');
    const forged = Buffer.from(JSON.stringify({ iss: ISS, sub: 'admin', aud: 'http://localhost:3000', exp: now() + 600 })).toString('base64url');
    await expectRefused(`${h}.${forged}.${s}`, /signature does not match/, 'signature');
  });

  it('expired (beyond the leeway), or without exp', async () => {
    await expectRefused(await signUserToken(rsa, { iss: ISS, exp: now() - 120 }), /The token expired at/, 'times');
    await expectRefused(await signUserToken(rsa, { iss: ISS, exp: null }), /no expiry \(exp\)/, 'times');
  });

  it('not yet valid, or issued in the future', async () => {
    await expectRefused(await signUserToken(rsa, { iss: ISS, nbf: now() + 300 }), /not valid yet/, 'times');
    await expectRefused(await signUserToken(rsa, { iss: ISS, iat: now() + 300 }), /issued in the future/, 'times');
  });

  it('wrong or missing audience', async () => {
    // The tester names the audience it expected (the deployment's PUBLIC_URL by default) and the one it got.
    expect(t.app.config.platformTokens.audience).toBe('http://localhost:3000');
    await expectRefused(
      await signUserToken(rsa, { iss: ISS, aud: 'https://someone-else.example' }),
      /^Wrong audience: aud must contain http:\/\/localhost:3000 \(the token has https:\/\/someone-else\.example\)$/,
      'audience',
    );
    await expectRefused(await signUserToken(rsa, { iss: ISS, aud: null }), /no audience \(aud\); it must contain http:\/\/localhost:3000$/, 'audience');
    expect((await platformAuth(await signUserToken(rsa, { iss: ISS, aud: ['x', 'http://localhost:3000'] }))).statusCode).toBe(200);
  });

  it('without a subject', async () => {
    await expectRefused(await signUserToken(rsa, { iss: ISS, sub: null }), /no subject/, 'subject');
  });

  it("the portal's own access token", async () => {
    const res = await platformAuth(owner.token);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 401, message: platformUserErrors.tokenNotVerified });
  });

  it('tells an outsider nothing of which issuers and kids are registered', async () => {
    const expiredKey = await addKey(t, appId, 'ES256', { register: false });
    await t.database.db.insert(applicationKeys).values({ applicationId: appId, kid: expiredKey.kid, jwk: { ...expiredKey.publicJwk, exp: now() - 60 } });
    const impostor = await addKey(t, appId, 'RS256', { register: false });
    const refusals = {
      unknownIssuer: await signUserToken(rsa, { iss: 'https://never-registered.example' }),
      unknownKid: await signUserToken(rsa, { iss: ISS, kid: 'no-such-kid' }),
      expiredKey: await signUserToken(expiredKey, { iss: ISS }),
      wrongAlgorithm: unsignedToken(rsa.kid, { iss: ISS }),
      badSignature: await signUserToken(impostor, { iss: ISS, kid: rsa.kid }),
      emptyIssuer: await signUserToken(rsa, { iss: '' }),
    };
    const answers = new Set<string>();
    for (const [name, token] of Object.entries(refusals)) {
      const res = await platformAuth(token);
      expect(res.statusCode, name).toBe(401);
      answers.add(res.body);
      // The same on the lock-user routes (GET /account takes application-signed tokens).
      const account = await t.app.inject({ url: '/api/account', headers: bearer(token) });
      expect(account.statusCode, name).toBe(401);
      answers.add(account.body);
    }
    expect([...answers]).toEqual([JSON.stringify({ code: 401, message: platformUserErrors.tokenNotVerified })]);
    // The owner's tester still says which check failed.
    expect((await tokenCheck(refusals.unknownIssuer)).json().error).toMatch(/is not registered on this application/);
    expect((await tokenCheck(refusals.unknownKid)).json().error).toMatch(/No key with kid no-such-kid/);
    expect((await tokenCheck(refusals.expiredKey)).json().error).toMatch(/expired at/);
  });
});

describe('POST /platform/application/:id/auth/token-check (the token tester)', () => {
  it('reports every check as passed for a good token, without creating a user', async () => {
    const res = await tokenCheck(await signUserToken(rsa, { iss: ISS, sub: 'tester-only' }));
    expect(res.statusCode).toBe(200);
    const report = res.json() as TokenCheckReport;
    expect(report).toMatchObject({ valid: true, error: null, applicationId: appId, header: { alg: 'RS256', kid: rsa.kid }, claims: { sub: 'tester-only' } });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['decode', 'pass'], ['issuer', 'pass'], ['key', 'pass'], ['algorithm', 'pass'],
      ['signature', 'pass'], ['audience', 'pass'], ['times', 'pass'], ['subject', 'pass'],
    ]);
    const list = await t.app.inject({ url: `/api/platform/application/${appId}/user?search=tester-only`, headers: bearer(owner.token) });
    expect(list.json().users).toEqual([]);
  });

  it('reports each failure, and skips what cannot run', async () => {
    const report = (await tokenCheck(await signUserToken(rsa, { iss: 'https://nope.example', aud: 'x', exp: now() - 999 }))).json() as TokenCheckReport;
    const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
    expect(status).toEqual({ decode: 'pass', issuer: 'fail', key: 'skipped', algorithm: 'skipped', signature: 'skipped', audience: 'fail', times: 'fail', subject: 'pass' });
  });

  it("only counts this application's issuers", async () => {
    const token = await signUserToken(otherAppKey, { iss: OTHER_ISS });
    expect((await platformAuth(token)).statusCode).toBe(200);
    const report = (await tokenCheck(token)).json() as TokenCheckReport;
    expect(report.error).toMatch(/not registered on this application/);
    expect(report.applicationId).toBeNull();
    expect((await tokenCheck(token, otherAppId)).json().valid).toBe(true);
  });

  it('validates the body, needs a portal token and ownership', async () => {
    expect((await tokenCheck('')).statusCode).toBe(400);
    const appToken = await signUserToken(rsa, { iss: ISS });
    const asApp = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/token-check`, headers: bearer(appToken), payload: { token: appToken } });
    expect(asApp.statusCode).toBe(401);
    const stranger = await createOwner(t);
    const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/token-check`, headers: bearer(stranger.token), payload: { token: appToken } });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain(rsa.kid);
  });
});
