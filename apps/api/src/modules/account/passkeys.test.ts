import fs from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountErrors, KEY_CODE_MAX_ATTEMPTS, passkeyErrors, type Passkey } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { settleAccountMail } from './account-trust.service.js';
import { softAuthenticator } from './soft-authenticator.js';

/** Passkeys — add, list, remove, sign in (the second factor for new keys), and every refusal. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url: `/api${url}`, headers: { ...(token ? bearer(token) : {}), ...headers }, payload });

/** The emails to `to` in the outbox, oldest first. */
async function mailsTo(to: string): Promise<{ subject: string; text: string }[]> {
  await settleAccountMail(t.app);
  const dir = path.join(t.dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { to: string; subject: string; text: string })
    .filter((m) => m.to === to);
}
/** The six-digit code of the newest "new passkey" email to `to`. */
async function emailedCode(to: string): Promise<string> {
  const mail = (await mailsTo(to)).filter((m) => m.subject === 'Your Latchkey code for a new passkey').at(-1);
  const code = mail?.text.match(/^\s*(\d{6})\s*$/m)?.[1];
  if (!code) throw new Error(`no passkey code emailed to ${to}`);
  return code;
}

async function account() {
  const email = uniqueEmail('passkey');
  const res = await inject('POST', '/auth/register', undefined, { email, password: 'passkey-pass' });
  await settleAccountMail(t.app);
  return { email, token: res.json().authToken as string };
}
/** The options to add a passkey from a password session: asked once (a code is emailed, 423), then with the code. */
async function registerOptions(me: { email: string; token: string }) {
  const asked = await inject('POST', '/account/passkeys/options', me.token);
  expect(asked.json()).toEqual({ code: 423, message: passkeyErrors.codeSent });
  const res = await inject('POST', '/account/passkeys/options', me.token, { code: await emailedCode(me.email) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
async function addPasskey(me: { email: string; token: string }, authenticator = softAuthenticator(), name?: string) {
  const options = await registerOptions(me);
  return inject('POST', '/account/passkeys', me.token, { response: authenticator.register(options), ...(name ? { name } : {}) });
}
const signInOptions = async () => (await inject('POST', '/auth/passkey/options')).json() as { challenge: string };

describe('passkeys', () => {
  it('adds a passkey from a password session with the emailed code, signs in with it — a session whose new keys need no emailed code', async () => {
    const me = await account();
    const authenticator = softAuthenticator();
    const added = await addPasskey(me, authenticator, 'My laptop');
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ id: authenticator.id, name: 'My laptop', lastUsedAt: null });
    // The account hears of it.
    const notice = (await mailsTo(me.email)).at(-1)!;
    expect(notice.subject).toBe('A passkey was added to your Latchkey account');
    expect(notice.text).toContain('“My laptop”');
    expect(notice.text).toContain('http://localhost:3000/account');
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

    // The passkey session adds another passkey without a code; nothing more is emailed but the notice.
    const codes = (await mailsTo(me.email)).length;
    const again = await inject('POST', '/account/passkeys/options', token);
    expect(again.statusCode, again.body).toBe(200);
    const second = await inject('POST', '/account/passkeys', token, { response: softAuthenticator().register(again.json()) }, { 'accept-language': 'de' });
    expect(second.statusCode, second.body).toBe(201);
    const mails = await mailsTo(me.email);
    expect(mails).toHaveLength(codes + 1);
    expect(mails.at(-1)!.subject).toBe('Ihrem Latchkey-Konto wurde ein Passkey hinzugefügt');
    expect(mails.at(-1)!.text).toContain('„Passkey 2“');
  });

  it('a password session alone adds no passkey: without the emailed code no options, with a wrong, old or used code neither', async () => {
    const me = await account();
    // No code: the code is emailed, and no challenge handed out (so nothing can be registered).
    const asked = await inject('POST', '/account/passkeys/options', me.token);
    expect(asked.json()).toEqual({ code: 423, message: passkeyErrors.codeSent });
    expect(asked.body).not.toContain('challenge');
    const first = await emailedCode(me.email);
    // A response made up without the server's challenge is refused.
    const forged = await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register({ challenge: 'bm90LWEtY2hhbGxlbmdl' }) });
    expect(forged.json()).toEqual({ code: 400, message: passkeyErrors.challengeUsed });
    // Asked again: a new code, the old one works no more.
    await inject('POST', '/account/passkeys/options', me.token);
    const second = await emailedCode(me.email);
    if (first !== second) expect((await inject('POST', '/account/passkeys/options', me.token, { code: first })).json()).toEqual({ code: 400, message: passkeyErrors.codeWrong });
    const wrong = second === '000000' ? '111111' : '000000';
    expect((await inject('POST', '/account/passkeys/options', me.token, { code: 'abc' })).statusCode).toBe(400);
    expect((await inject('POST', '/account/passkeys/options', me.token, { code: wrong })).json()).toEqual({ code: 400, message: passkeyErrors.codeWrong });
    // The right code: the options, once.
    const ok = await inject('POST', '/account/passkeys/options', me.token, { code: second });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await inject('POST', '/account/passkeys/options', me.token, { code: second })).json()).toEqual({ code: 400, message: passkeyErrors.codeNotPending });
    const added = await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register(ok.json()) });
    expect(added.statusCode, added.body).toBe(201);

    // Five wrong tries spend the code: the right one then works no more.
    await inject('POST', '/account/passkeys/options', me.token);
    const third = await emailedCode(me.email);
    const bad = third === '000000' ? '111111' : '000000';
    for (let i = 1; i < KEY_CODE_MAX_ATTEMPTS; i++) expect((await inject('POST', '/account/passkeys/options', me.token, { code: bad })).json().message).toBe(passkeyErrors.codeWrong);
    expect((await inject('POST', '/account/passkeys/options', me.token, { code: bad })).json().message).toBe(accountErrors.codeTooManyTries);
    expect((await inject('POST', '/account/passkeys/options', me.token, { code: third })).json()).toEqual({ code: 400, message: passkeyErrors.codeNotPending });

    // Another account's code is no use here.
    const other = await account();
    await inject('POST', '/account/passkeys/options', me.token);
    await inject('POST', '/account/passkeys/options', other.token);
    const theirs = await emailedCode(other.email);
    const mine = await emailedCode(me.email);
    if (theirs !== mine) expect((await inject('POST', '/account/passkeys/options', me.token, { code: theirs })).json().message).toBe(passkeyErrors.codeWrong);
  });

  it('refuses a replayed response, an unknown passkey, a wrong origin, another account’s user handle', async () => {
    const me = await account();
    const authenticator = softAuthenticator();
    await addPasskey(me, authenticator);
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
    const theirOptions = await registerOptions(someoneElse);
    await inject('POST', '/account/passkeys', someoneElse.token, { response: theirs.register(theirOptions) });
    const handle = theirOptions.user.id as string;
    const mixed = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions(), { handle }) });
    expect(mixed.json()).toEqual({ code: 401, message: passkeyErrors.invalid });
    // A challenge handed out for adding a passkey does not sign in, and the other way round.
    const forAdding = await registerOptions(me);
    expect((await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(forAdding) })).json().message).toBe(passkeyErrors.challengeUsed);
    const loginOptions = await signInOptions();
    expect((await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register(loginOptions) })).json().message).toBe(passkeyErrors.challengeUsed);
  });

  it('a session that signed in with a passkey certifies new keys without a code only while that passkey is the account’s', async () => {
    const me = await account();
    const authenticator = softAuthenticator();
    expect((await addPasskey(me, authenticator)).statusCode).toBe(201);
    const signedIn = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions()) });
    const token = signedIn.json().authToken as string;
    const newKey = () => generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
    const proved = newKey();
    expect((await inject('POST', '/auth/certificate', token, { ephemeralKey: proved })).statusCode).toBe(200);
    expect((await inject('DELETE', `/account/passkeys/${authenticator.id}`, token)).statusCode).toBe(204);
    // Its passkey gone, the session is a password session again: a new key needs the emailed code, and so
    // does a new passkey.
    const refused = await inject('POST', '/auth/certificate', token, { ephemeralKey: newKey() });
    expect(refused.json()).toEqual({ code: 423, message: accountErrors.secondFactorRequired });
    expect((await inject('POST', '/account/passkeys/options', token)).statusCode).toBe(423);
    const sessions = (await inject('GET', '/account/sessions', token)).json() as { current: boolean; passkey: boolean }[];
    expect(sessions.find((s) => s.current)!.passkey).toBe(false);
    // A key it proved before stays proved.
    expect((await inject('POST', '/auth/certificate', token, { ephemeralKey: proved })).statusCode).toBe(200);
  });

  it('a passkey belongs to one account: registered again elsewhere 409, removed only by its owner, then it signs in no more', async () => {
    const me = await account();
    const other = await account();
    const authenticator = softAuthenticator();
    await addPasskey(me, authenticator);
    expect((await addPasskey(other, authenticator)).statusCode).toBe(409);
    expect((await inject('DELETE', `/account/passkeys/${authenticator.id}`, other.token)).json()).toEqual({ code: 404, message: passkeyErrors.notFound });
    expect((await inject('DELETE', `/account/passkeys/${authenticator.id}`, me.token)).statusCode).toBe(204);
    expect((await inject('GET', '/account/passkeys', me.token)).json()).toEqual([]);
    const res = await inject('POST', '/auth/passkey', undefined, { response: authenticator.authenticate(await signInOptions()) });
    expect(res.json().message).toBe(passkeyErrors.unknown);
    // A response for another relying party's origin is not added either.
    const options = await registerOptions(me);
    expect((await inject('POST', '/account/passkeys', me.token, { response: softAuthenticator().register(options, 'https://evil.example') })).json()).toEqual({ code: 400, message: passkeyErrors.invalid });
  });
});
