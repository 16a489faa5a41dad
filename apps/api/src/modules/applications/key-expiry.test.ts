import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages, platformUserErrors, type Application, type TokenCheckReport } from '@latchkey/contract';
import { createTestApp, later, type TestApp } from '../../../test/helpers.js';
import { applicationKeys } from '../../db/schema.js';
import { addKey, bearer, createApplication, createOwner, signUserToken, type SigningKey } from '../../../test/fixtures/platform-users.js';

/**
 * An uploaded key may carry an expiry, the JWK member `exp` (seconds since 1970). Once it has
 * passed the key verifies nothing, wherever application-signed tokens are accepted — including tokens
 * verified (and cached) before it expired.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
const ISS = 'https://auth.expiry.example';
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/issuer`, headers: bearer(owner.token), payload: { url: ISS } });
  expect(res.statusCode).toBe(204);
});
afterAll(() => t?.close());

const postKey = (jwk: unknown) => t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/key`, headers: bearer(owner.token), payload: jwk as object });
const getApp = async () => (await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}`, headers: bearer(owner.token) })).json() as Application;

/** A fresh key pair whose public half is uploaded through the API with this `exp`. */
async function uploadWithExp(exp: number | undefined): Promise<SigningKey> {
  const key = await addKey(t, appId, 'ES256', { register: false });
  const res = await postKey({ ...key.publicJwk, ...(exp === undefined ? {} : { exp }) });
  expect(res.statusCode, res.body).toBe(204);
  return key;
}

describe('uploading a key with an expiry', () => {
  it('keeps exp on the key (the Application shape is unchanged otherwise)', async () => {
    const exp = now() + 30 * 24 * 3600;
    const key = await uploadWithExp(exp);
    expect((await getApp()).authKeys[key.kid]).toEqual({ ...key.publicJwk, exp });
    const without = await uploadWithExp(undefined);
    expect((await getApp()).authKeys[without.kid]).not.toHaveProperty('exp');
  });

  it.each([['tomorrow'], [1.5], [-5], [0], [Date.now()], [null]])('refuses exp %j with the contract message', async (exp) => {
    const key = await addKey(t, appId, 'ES256', { register: false });
    const res = await postKey({ ...key.publicJwk, exp });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(messages.keyExp);
    expect((await getApp()).authKeys).not.toHaveProperty(key.kid);
  });
});

describe('an expired key stops verifying', () => {
  it('GET /platform/auth and the tester refuse a token signed with it, naming the expiry', async () => {
    // Uploading an expired key is refused: this one was stored while it was still valid.
    const key = await addKey(t, appId, 'ES256', { register: false });
    await t.database.db.insert(applicationKeys).values({ applicationId: appId, kid: key.kid, jwk: { ...key.publicJwk, exp: now() - 60 } });
    const token = await signUserToken(key, { iss: ISS, sub: 'expired-1' });
    const res = await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    // To outsiders like any key failure; the owner's tester names the expiry.
    expect(res.json().message).toBe(platformUserErrors.tokenNotVerified);
    const report = (
      await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/token-check`, headers: bearer(owner.token), payload: { token } })
    ).json() as TokenCheckReport;
    expect(report.valid).toBe(false);
    expect(report.error).toMatch(new RegExp(`^Key ${key.kid} expired at \\d{4}-`));
    expect(report.checks.find((c) => c.status === 'fail')?.id).toBe('key');
    expect(report.keySource).toBeNull();
  });

  it('a key that has not expired yet verifies, and the tester names it', async () => {
    const key = await uploadWithExp(now() + 3600);
    const token = await signUserToken(key, { iss: ISS, sub: 'valid-1' });
    expect((await t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(token) })).statusCode).toBe(200);
    const report = (
      await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/auth/token-check`, headers: bearer(owner.token), payload: { token } })
    ).json() as TokenCheckReport;
    expect(report.keySource).toEqual({ type: 'uploaded', kid: key.kid });
  });

  it('lock-user routes (GET /account, POST /auth/certificate) stop accepting it when it expires, cached or not', async () => {
    const key = await uploadWithExp(now() + 2);
    const token = await signUserToken(key, { iss: ISS, sub: 'soon-1', exp: now() + 600 });
    expect((await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) })).statusCode).toBe(200);
    const [account, certificate] = await later(2600, async () => [
      await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) }),
      await t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey: 'x' } }),
    ]);
    expect(account.statusCode).toBe(401);
    expect(account.json().message).toBe(platformUserErrors.tokenNotVerified);
    expect(certificate.statusCode).toBe(401);
  });
});
