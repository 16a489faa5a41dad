import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { addIssuer, addKey, createApplication, createOwner, signUserToken } from '../../../test/fixtures/platform-users.js';

/**
 * An auth domain is compared in its RFC 3986 normal form — another letter case or the
 * default port is the same issuer (409, not a second registration), and a token's `iss` is compared the same way.
 */
let t: TestApp;
let owner: { token: string; userId: string };
let applicationId: string;
let otherApplicationId: string;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const issuerUrl = (id: string) => `/api/platform/application/${id}/auth/issuer`;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId, 'First');
  otherApplicationId = await createApplication(t, owner.userId, 'Second');
});
afterAll(() => t?.close());

const add = (id: string, url: string) => t.app.inject({ method: 'POST', url: issuerUrl(id), headers: bearer(owner.token), payload: { url } });

async function authDomains(id: string): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/platform/application/${id}`, headers: bearer(owner.token) });
  return (res.json() as { authDomains: string[] }).authDomains;
}

/** Each test registers issuers of its own hosts, on applications of its own where it changes them: any order. */
describe('auth domains in their normal form', () => {
  it('stores the normal form and refuses the same issuer written differently, on any application', async () => {
    expect((await add(applicationId, 'HTTPS://Login.Example.COM:443/')).statusCode).toBe(204);
    expect(await authDomains(applicationId)).toEqual(['https://login.example.com']);
    for (const again of ['https://login.example.com', 'https://LOGIN.example.com/', 'https://login.example.com:443', 'https://login.example.com:443/']) {
      for (const id of [applicationId, otherApplicationId]) {
        const res = await add(id, again);
        expect(res.statusCode, `${again} on ${id === applicationId ? 'the same' : 'another'} application`).toBe(409);
        expect(res.json().message).toBe(apiErrors.issuerTaken);
      }
    }
    // A path and a non-default port are part of the issuer.
    expect((await add(applicationId, 'https://login.example.com:8443')).statusCode).toBe(204);
    expect((await add(applicationId, 'https://login.example.com/tenant-%7ea')).statusCode).toBe(204);
    expect((await add(applicationId, 'https://LOGIN.example.com/tenant-~a')).statusCode).toBe(409);
  });

  it('removes an auth domain given in another form', async () => {
    const id = await createApplication(t, owner.userId, 'Removing');
    expect((await add(id, 'https://remove.example.com/tenant-%7ea')).statusCode).toBe(204);
    expect(await authDomains(id)).toContain('https://remove.example.com/tenant-~a');
    const res = await t.app.inject({ method: 'DELETE', url: issuerUrl(id), headers: bearer(owner.token), payload: { url: 'https://Remove.Example.com:443/tenant-%7Ea' } });
    expect(res.statusCode).toBe(204);
    expect(await authDomains(id)).not.toContain('https://remove.example.com/tenant-~a');
  });

  it("compares a token's iss in the same normal form", async () => {
    const id = await createApplication(t, owner.userId, 'Signing in');
    expect((await add(id, 'HTTPS://Sign-In.Example.COM:443/')).statusCode).toBe(204);
    const key = await addKey(t, id, 'ES256');
    for (const iss of ['https://sign-in.example.com', 'https://SIGN-IN.Example.com/', 'https://sign-in.example.com:443']) {
      const token = await signUserToken(key, { iss, sub: 'normal-form-user' });
      const res = await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(token) });
      expect(res.statusCode, iss).toBe(200);
      expect(res.json()).toMatchObject({ applicationId: id, sub: 'normal-form-user' });
    }
    const stranger = await signUserToken(key, { iss: 'https://sign-in.example.com/other', sub: 'normal-form-user' });
    expect((await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(stranger) })).statusCode).toBe(401);
  });

  it('still matches an auth domain stored before issuers were normalised (written as given)', async () => {
    const legacyApp = await createApplication(t, owner.userId, 'Legacy');
    await addIssuer(t, legacyApp, 'https://Legacy.Example.com:443/');
    const key = await addKey(t, legacyApp, 'ES256');
    // Its exact text matches (as before); another form would need the row rewritten, which is not done.
    for (const iss of ['https://Legacy.Example.com:443/']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(await signUserToken(key, { iss, sub: 'legacy-user' })) });
      expect(res.statusCode, iss).toBe(200);
    }
    expect((await add(applicationId, 'https://legacy.example.com')).statusCode).toBe(409);
  });
});
