import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors, messages } from '@latchkey/contract';
import { eq, sql } from 'drizzle-orm';
import { applications } from '../../db/schema.js';
import { createTestApp, eventually, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { DIRECTORY_PUBLIC_KEY } from '../devices-sdk/directory.service.js';

let t: TestApp;
let me: { token: string; userId: string };
let other: { token: string; userId: string };

async function register() {
  const body = (await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('apps'), password: 'apps-pass', displayName: 'D' } })).json();
  return { token: body.authToken as string, userId: JSON.parse(Buffer.from(body.authToken.split('.')[1], 'base64url').toString()).sub as string };
}
const as = (u: { token: string }) => ({ authorization: `Bearer ${u.token}` });
const call = (u: { token: string }, method: string, url: string, payload?: unknown) =>
  t.app.inject({ method: method as 'POST', url: `/api${url}`, headers: as(u), ...(payload !== undefined ? { payload: payload as object } : {}) });
async function create(u = me, name = 'My App') {
  const res = await call(u, 'POST', '/platform/application', { name, companyName: 'Co', mailingAddress: '1 Road' });
  expect(res.statusCode).toBe(201);
  return res.headers.location!.toString().split('/').pop()!;
}
const jwk = (kid: string, type: 'ec' | 'rsa' | 'ed25519' = 'ec', opts: object = { namedCurve: 'P-256' }) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node's overloads need a literal per call
  ({ ...(generateKeyPairSync as any)(type, opts).publicKey.export({ format: 'jwk' }), kid });

beforeAll(async () => {
  t = await createTestApp();
  me = await register();
  other = await register();
});
afterAll(() => t.close());

describe('applications', () => {
  it('serves each read fresh: a change through the API at once, one made elsewhere as soon as the database announces it', async () => {
    const id = await create(me, 'Cached');
    const read = async () => {
      const res = await call(me, 'GET', `/platform/application/${id}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      return res.json();
    };
    const first = await read();
    expect(await read()).toEqual(first);
    // Changes through the API: the application itself, then a row of its own.
    expect((await call(me, 'POST', `/platform/application/${id}`, { name: 'Renamed' })).statusCode).toBe(204);
    expect((await read()).name).toBe('Renamed');
    expect((await call(me, 'POST', `/platform/application/${id}/cors`, { url: 'https://cached.example.com' })).statusCode).toBe(204);
    expect((await read()).corsDomains).toEqual(['https://cached.example.com']);
    // A change another instance made: the database row and its version, nothing in this process. It is
    // seen once the database's change notice reaches this instance (at once on PGlite, in-process).
    await t.database.db.update(applications).set({ name: 'Elsewhere', version: sql`${applications.version} + 1` }).where(eq(applications.id, id));
    expect(await eventually(async () => (await read()).name === 'Elsewhere')).toBe(true);
    // The body is served from the cache while the version holds: a write that skips the version bump
    // (which no code path does) is not seen, which shows the cache is in use and keyed by version alone.
    await t.database.db.update(applications).set({ name: 'Unversioned' }).where(eq(applications.id, id));
    expect((await read()).name).toBe('Elsewhere');
    // Not for anyone else, cached or not.
    expect((await call(other, 'GET', `/platform/application/${id}`)).statusCode).toBe(404);
    // Removed: 404, not the cached body.
    expect((await call(me, 'DELETE', `/platform/application/${id}`)).statusCode).toBe(204);
    expect((await call(me, 'GET', `/platform/application/${id}`)).statusCode).toBe(404);
  });

  it('creates (201 + Location), reads back with defaults, lists only my own', async () => {
    const res = await call(me, 'POST', '/platform/application', { name: 'Door', companyName: 'Co', mailingAddress: 'Road', owners: ['ignored'] });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toMatch(/^http:\/\/localhost:3000\/api\/platform\/application\/[0-9a-f-]{36}$/);
    const id = res.headers.location!.toString().split('/').pop()!;
    const app = (await call(me, 'GET', `/platform/application/${id}`)).json();
    expect(app).toMatchObject({
      applicationId: id,
      name: 'Door',
      owners: [me.userId],
      logoUrl: null,
      authKeys: {},
      authDomains: [],
      corsDomains: [],
      emailPreferences: { primaryColour: '#00283C', secondaryColour: '#45BDD1', callToAction: null },
    });
    expect(app.lastUpdated).toBeGreaterThan(1_700_000_000);
    const list = await call(me, 'GET', '/platform/application');
    const mine = list.json().map((a: { applicationId: string }) => a.applicationId);
    expect(mine).toContain(id);
    // Read again, the list comes from this instance's cache: the same answer, sent the same way.
    const again = await call(me, 'GET', '/platform/application');
    expect(again.statusCode).toBe(200);
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.body).toBe(list.body);
    expect((await call(other, 'GET', '/platform/application')).json()).toEqual([]);
  });

  it('validates creation with the contract messages', async () => {
    const res = await call(me, 'POST', '/platform/application', { name: ' ', companyName: 'Co' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual(expect.arrayContaining([{ path: 'body.name', message: messages.required }, { path: 'body.mailingAddress', message: messages.required }]));
  });

  it('partially updates: null clears optional fields, required fields cannot be cleared, preferences merge', async () => {
    const id = await create();
    const upd = (payload: unknown) => call(me, 'POST', `/platform/application/${id}`, payload);
    expect((await upd({ appLink: 'https://a.example.com', privacyPolicy: 'https://a.example.com/p', emailPreferences: { senderName: 'S', primaryColour: '#111' } })).statusCode).toBe(204);
    expect((await upd({ appLink: null, emailPreferences: { secondaryColour: '#222222' } })).statusCode).toBe(204);
    const app = (await call(me, 'GET', `/platform/application/${id}`)).json();
    expect(app).toMatchObject({ appLink: null, privacyPolicy: 'https://a.example.com/p', emailPreferences: { senderName: 'S', primaryColour: '#111', secondaryColour: '#222222' } });
    expect((await upd({ name: null })).statusCode).toBe(400);
    expect((await upd({ privacyPolicy: 'ftp://x' })).json().message).toBe(messages.invalidUrl);
    expect((await upd({ supportContact: 'tel:1' })).json().message).toBe(messages.invalidUrlOrMailto);
    expect((await upd({ emailPreferences: { primaryColour: '#12' } })).json().message).toBe(messages.invalidHexColour);
    expect((await upd({ emailPreferences: { senderEmail: 'x' } })).json().message).toBe(messages.invalidEmail);
    expect((await upd({ logoUrl: 'https://evil.example.com/a.png' })).json().message).toBe(apiErrors.logoUrlNotAllowed);
  });

  it('a non-owner gets the same 404 as for a missing application, and learns nothing', async () => {
    const id = await create(me, 'Private Door');
    for (const [method, url, payload] of [
      ['GET', `/platform/application/${id}`],
      ['POST', `/platform/application/${id}`, { name: 'Hijack' }],
      ['DELETE', `/platform/application/${id}`],
      ['GET', `/platform/application/${id}/owner`],
      ['POST', `/platform/application/${id}/cors`, { url: 'https://x.example.com' }],
    ] as const) {
      const res = await call(other, method, url, payload);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 404, message: apiErrors.applicationNotFound });
      expect(res.body).not.toContain('Private Door');
    }
    const missing = await call(me, 'GET', `/platform/application/00000000-0000-4000-8000-000000000000`);
    expect(missing.json()).toEqual({ code: 404, message: apiErrors.applicationNotFound });
    expect((await call(me, 'GET', '/platform/application/not-a-uuid')).statusCode).toBe(404);
    expect((await call(me, 'GET', `/platform/application/${id}`)).json().name).toBe('Private Door');
  });

  it('deletes', async () => {
    const id = await create();
    expect((await call(me, 'DELETE', `/platform/application/${id}`)).statusCode).toBe(204);
    expect((await call(me, 'GET', `/platform/application/${id}`)).statusCode).toBe(404);
  });
});

describe('owners and directory', () => {
  it('finds users by email (both path forms), adds and removes owners, keeps the last one', async () => {
    const id = await create();
    const meEmail = (await call(me, 'GET', '/account')).json().email as string;
    const otherEmail = (await call(other, 'GET', '/account')).json().email as string;
    const found = await call(me, 'POST', '/directory/query', { email: otherEmail.toUpperCase() });
    // A key the SDKs can parse (the platform keeps none per user; see devices-sdk/directory.service.ts).
    expect(found.json()).toEqual({ id: other.userId, publicKey: DIRECTORY_PUBLIC_KEY });
    const doubleSlash = await call(me, 'POST', '/platform/application//directory/query/', { email: otherEmail });
    expect(doubleSlash.json().id).toBe(other.userId);
    const nobody = await call(me, 'POST', '/directory/query', { email: uniqueEmail('nobody') });
    expect(nobody.json()).toEqual({ code: 404, message: apiErrors.userNotFound });

    expect((await call(me, 'POST', `/platform/application/${id}/owner`, { userId: other.userId })).statusCode).toBe(204);
    expect((await call(me, 'POST', `/platform/application/${id}/owner`, { userId: other.userId })).json().message).toBe(apiErrors.ownerExists);
    expect((await call(me, 'POST', `/platform/application/${id}/owner`, { userId: '00000000-0000-4000-8000-000000000000' })).json().message).toBe(apiErrors.userNotFound);
    const owners = (await call(other, 'GET', `/platform/application/${id}/owner`)).json();
    expect(owners).toEqual([
      { userId: me.userId, email: meEmail, displayName: 'D', orphan: false, foreign: false },
      { userId: other.userId, email: otherEmail, displayName: 'D', orphan: false, foreign: false },
    ]);
    expect((await call(other, 'DELETE', `/platform/application/${id}/owner`, { userId: me.userId })).statusCode).toBe(204);
    const last = await call(other, 'DELETE', `/platform/application/${id}/owner`, { userId: other.userId });
    expect(last.statusCode).toBe(409);
    expect(last.json().message).toBe(apiErrors.lastOwner);
    expect((await call(other, 'DELETE', `/platform/application/${id}/owner`, { userId: me.userId })).json().message).toBe(apiErrors.ownerNotFound);
  });
});

describe('auth keys, issuers and CORS domains', () => {
  it('accepts public RSA ≥ 2048, EC and Ed25519 keys; refuses short, private and duplicate ones; removes by kid', async () => {
    const id = await create();
    const key = (k: unknown) => call(me, 'POST', `/platform/application/${id}/auth/key`, k);
    expect((await key(jwk('rsa-1', 'rsa', { modulusLength: 2048 }))).statusCode).toBe(204);
    expect((await key(jwk('ec-1'))).statusCode).toBe(204);
    expect((await key(jwk('ed-1', 'ed25519', {}))).statusCode).toBe(204);
    expect((await key(jwk('rsa-short', 'rsa', { modulusLength: 1024 }))).json().message).toBe(messages.keyRsaTooShort);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect((await key({ ...privateKey.export({ format: 'jwk' }), kid: 'priv' })).json().message).toBe(messages.keyPrivateMembers);
    const dup = await key(jwk('ec-1'));
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe(apiErrors.keyExists);
    const app = (await call(me, 'GET', `/platform/application/${id}`)).json();
    expect(Object.keys(app.authKeys).sort()).toEqual(['ec-1', 'ed-1', 'rsa-1']);
    expect(app.authKeys['ec-1']).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig' });
    expect((await call(me, 'DELETE', `/platform/application/${id}/auth/key`, { kid: 'ec-1' })).statusCode).toBe(204);
    expect((await call(me, 'DELETE', `/platform/application/${id}/auth/key`, { kid: 'ec-1' })).json().message).toBe(apiErrors.keyNotFound);
    // The kid to remove follows the kid rule: its length and safe set, never a control or bidi character.
    for (const [kid, message] of [['x'.repeat(201), messages.tooLong], ['ed\u202E1', messages.bidiControls], ['ed\u00001', messages.controlCharacters], ['ed 1', messages.keyKidInvalid]] as const) {
      const bad = await call(me, 'DELETE', `/platform/application/${id}/auth/key`, { kid });
      expect(bad.statusCode, JSON.stringify(kid)).toBe(400);
      expect(bad.json().message).toContain(message);
    }
  });

  it('an issuer belongs to one application only', async () => {
    const a = await create();
    const b = await create(other);
    const issuer = `https://issuer-${Date.now()}.example.com`;
    expect((await call(me, 'POST', `/platform/application/${a}/auth/issuer`, { url: issuer })).statusCode).toBe(204);
    const taken = await call(other, 'POST', `/platform/application/${b}/auth/issuer`, { url: issuer });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toBe(apiErrors.issuerTaken);
    expect((await call(me, 'POST', `/platform/application/${a}/auth/issuer`, { url: 'not a url' })).json().message).toBe(messages.invalidUrl);
    expect((await call(me, 'DELETE', `/platform/application/${a}/auth/issuer`, { url: issuer })).statusCode).toBe(204);
    expect((await call(me, 'DELETE', `/platform/application/${a}/auth/issuer`, { url: issuer })).json().message).toBe(apiErrors.issuerNotFound);
    expect((await call(other, 'POST', `/platform/application/${b}/auth/issuer`, { url: issuer })).statusCode).toBe(204);
  });

  it('CORS domains are https origins, normalised', async () => {
    const id = await create();
    const cors = (method: string, url: string) => call(me, method, `/platform/application/${id}/cors`, { url });
    expect((await cors('POST', 'http://x.example.com')).json().message).toBe(messages.invalidSecureUrl);
    expect((await cors('POST', 'https://App.Example.com/some/path')).statusCode).toBe(204);
    expect((await cors('POST', 'https://app.example.com')).json().message).toBe(apiErrors.corsExists);
    expect((await call(me, 'GET', `/platform/application/${id}`)).json().corsDomains).toEqual(['https://app.example.com']);
    expect((await cors('DELETE', 'https://APP.example.com/')).statusCode).toBe(204);
    expect((await cors('DELETE', 'https://app.example.com')).json().message).toBe(apiErrors.corsNotFound);
  });

  it('20 parallel key adds with distinct kids are all kept', async () => {
    const id = await create();
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => call(me, 'POST', `/platform/application/${id}/auth/key`, jwk(`k${i}`)).then((r) => r.statusCode)));
    expect(statuses.every((s) => s === 204)).toBe(true);
    expect(Object.keys((await call(me, 'GET', `/platform/application/${id}`)).json().authKeys)).toHaveLength(20);
  });
});
