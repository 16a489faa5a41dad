import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkeyErrors, type Passkey } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { settleAccountMail } from './account-trust.service.js';
import { softAuthenticator } from './soft-authenticator.js';

/** Issue 29 part 5: passkeys — add, list, remove, sign in (the second factor for new keys), and every refusal. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string, payload?: object) =>
  t.app.inject({ method, url: `/api${url}`, headers: token ? bearer(token) : {}, payload });

async function account() {
  const email = uniqueEmail('passkey');
  const res = await inject('POST', '/auth/register', undefined, { email, password: 'passkey-pass' });
  await settleAccountMail();
  return { email, token: res.json().authToken as string };
}
async function addPasskey(token: string, authenticator = softAuthenticator(), name?: string) {
  const options = (await inject('POST', '/account/passkeys/options', token)).json();
  return inject('POST', '/account/passkeys', token, { response: authenticator.register(options), ...(name ? { name } : {}) });
}
const signInOptions = async () => (await inject('POST', '/auth/passkey/options')).json() as { challenge: string };

describe('passkeys (issue 29)', () => {
  it('adds a passkey, signs in with it — a session whose new keys need no emailed code', async () => {
    const me = await account();
    const authenticator = softAuthenticator();
    const added = await addPasskey(me.token, authenticator, 'My laptop');
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ id: authenticator.id, name: 'My laptop', lastUsedAt: null });
    expect(((await inject('GET', '/account/passkeys', me.token)).json() as Passkey[]).map((p) => p.name)).toEqual(['My laptop']);

    const options = await signInOptions();
    const res = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(options) });
    expect(res.statusCode, res.body).toBe(200);
    const token = res.json().authToken as string;
    expect((await inject('GET', '/account', token)).json().email).toBe(me.email);
    const sessions = (await inject('GET', '/account/sessions', token)).json() as { current: boolean; passkey: boolean }[];
    expect(sessions.find((s) => s.current)!.passkey).toBe(true);
    expect(((await inject('GET', '/account/passkeys', token)).json() as Passkey[])[0]!.lastUsedAt).not.toBeNull();

    const key = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
    expect((await inject('POST', '/auth/certificate', token, { ephemeralKey: key })).statusCode).toBe(200);
    // The password session of the same account still needs the code for another new key.
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
    expect((await inject('POST', '/auth/certificate', me.token, { ephemeralKey: other })).statusCode).toBe(423);
  });

  it('refuses a replayed response, an unknown passkey, a wrong origin, another account’s user handle', async () => {
    const me = await account();
    const authenticator = softAuthenticator();
    await addPasskey(me.token, authenticator);
    const options = await signInOptions();
    const response = authenticator.authenticate(options);
    expect((await inject('POST', '/auth/passkey', undefined, { response })).statusCode).toBe(200);
    const replay = await inject('POST', '/auth/passkey', undefined, { response });
    expect(replay.json()).toEqual({ code: 400, message: passkeyErrors.challengeUsed });

    const stranger = softAuthenticator();
    const unknown = await inject('POST', '/auth/passkey', undefined, { response: stranger.authenticate(await signInOptions()) });
    expect(unknown.json()).toEqual({ code: 401, message: passkeyErrors.unknown });

    const evil = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions(), { at: 'https://evil.example' }) });
    expect(evil.json()).toEqual({ code: 401, message: passkeyErrors.invalid });

    const someoneElse = await account();
    const theirs = softAuthenticator();
    const theirOptions = (await inject('POST', '/account/passkeys/options', someoneElse.token)).json();
    await inject('POST', '/account/passkeys', someoneElse.token, { response: theirs.register(theirOptions) });
    const handle = theirOptions.user.id as string;
    const mixed = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions(), { handle }) });
    expect(mixed.json()).toEqual({ code: 401, message: passkeyErrors.invalid });
    // A challenge handed out for adding a passkey does not sign in, and the other way round.
    const registerOptions = (await inject('POST', '/account/passkeys/options', me.token)).json();
    expect((await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(registerOptions) })).json().message).toBe(passkeyErrors.challengeUsed);
    const loginOptions = await signInOptions();
    expect((await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register(loginOptions) })).json().message).toBe(passkeyErrors.challengeUsed);
  });

  it('a passkey belongs to one account: registered again elsewhere 409, removed only by its owner, then it signs in no more', async () => {
    const me = await account();
    const other = await account();
    const authenticator = softAuthenticator();
    await addPasskey(me.token, authenticator);
    expect((await addPasskey(other.token, authenticator)).statusCode).toBe(409);
    expect((await inject('DELETE', `/account/passkeys/${authenticator.id}`, other.token)).json()).toEqual({ code: 404, message: passkeyErrors.notFound });
    expect((await inject('DELETE', `/account/passkeys/${authenticator.id}`, me.token)).statusCode).toBe(204);
    expect((await inject('GET', '/account/passkeys', me.token)).json()).toEqual([]);
    const res = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions()) });
    expect(res.json().message).toBe(passkeyErrors.unknown);
    // A response for another relying party's origin is not added either.
    const options = (await inject('POST', '/account/passkeys/options', me.token)).json();
    expect((await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register(options, 'https://evil.example') })).json()).toEqual({ code: 400, message: passkeyErrors.invalid });
  });
});
