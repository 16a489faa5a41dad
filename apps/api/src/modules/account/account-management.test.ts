import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountErrors, type AccountSession } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { applicationOwners, certifiedKeys, sessions, users } from '../../db/schema.js';
import { certify, createLock, execute, signOperation } from '../../../test/fixtures/operations.js';
import { settleAccountMail } from './account-trust.service.js';

/** The account page's API: sessions (list, end one), and deleting the account. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url: `/api${url}`, headers: { ...(token ? bearer(token) : {}), ...headers }, payload });

async function account() {
  const email = uniqueEmail('page');
  const res = await inject('POST', '/auth/register', undefined, { email, password: 'page-pass', displayName: 'Paige' }, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0' });
  await settleAccountMail(t.app);
  const token = res.json().authToken as string;
  const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
  return { email, token, userId };
}
const signIn = async (email: string, ua = 'Mozilla/5.0 (iPhone) Safari/605.1') =>
  (await inject('POST', '/auth/token', undefined, { email, password: 'page-pass' }, { 'user-agent': ua })).json().authToken as string;

async function createApp(token: string, name = 'Page App') {
  const res = await inject('POST', '/platform/application', token, { name, companyName: 'Page Co', mailingAddress: '1 Page Road' });
  return res.headers.location!.toString().split('/').pop()!;
}

describe('sessions', () => {
  it('lists the account’s sessions with browser and last use, the current one first; ends one; never another account’s', async () => {
    const me = await account();
    const phone = await signIn(me.email);
    const list = (await inject('GET', '/account/sessions', me.token)).json() as AccountSession[];
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ current: true, userAgent: expect.stringContaining('Chrome'), passkey: false });
    expect(list[1]).toMatchObject({ current: false, userAgent: expect.stringContaining('iPhone') });
    expect(list[1]!.lastUsedAt).toBeGreaterThan(Date.now() / 1000 - 60);

    const stranger = await account();
    expect((await inject('DELETE', `/account/sessions/${list[1]!.id}`, stranger.token)).statusCode).toBe(404);
    expect((await inject('GET', '/account', phone)).statusCode).toBe(200);
    expect((await inject('DELETE', `/account/sessions/${list[1]!.id}`, me.token)).statusCode).toBe(204);
    expect((await inject('GET', '/account', phone)).statusCode).toBe(401);
    expect((await inject('DELETE', `/account/sessions/${list[1]!.id}`, me.token)).json()).toEqual({ code: 404, message: accountErrors.sessionNotFound });
    expect((await inject('DELETE', '/account/sessions/not-a-uuid', me.token)).statusCode).toBe(400);
    expect(((await inject('GET', '/account/sessions', me.token)).json() as AccountSession[]).map((s) => s.current)).toEqual([true]);
  });

  it('a refresh counts as use', async () => {
    const me = await account();
    const [before] = await t.database.db.select().from(sessions).where(eq(sessions.userId, me.userId));
    await t.database.db.update(sessions).set({ lastUsedAt: new Date(Date.now() - 3_600_000) }).where(eq(sessions.id, before!.id));
    const refresh = (await inject('POST', '/auth/register', undefined, {})).statusCode; // unrelated request
    expect(refresh).toBe(400);
    const login = await inject('POST', '/auth/token', undefined, { email: me.email, password: 'page-pass' });
    await inject('POST', '/auth/token/refresh', login.json().refreshToken);
    const list = (await inject('GET', '/account/sessions', me.token)).json() as AccountSession[];
    expect(list.find((s) => !s.current)!.lastUsedAt).toBeGreaterThan(Date.now() / 1000 - 60);
  });
});

describe('DELETE /account', () => {
  it('is refused while the account is the last owner of an application, and nothing changes', async () => {
    const me = await account();
    const appId = await createApp(me.token);
    const res = await inject('DELETE', '/account', me.token);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ code: 409, message: accountErrors.lastOwner });
    expect((await inject('GET', '/account', me.token)).statusCode).toBe(200);
    expect((await inject('GET', `/platform/application/${appId}`, me.token)).statusCode).toBe(200);
  });

  it('otherwise ends sessions, keys and ownerships at once; the history keeps the account as "Deleted user"', async () => {
    const owner = await account();
    const leaver = await account();
    const appId = await createApp(owner.token, 'Shared App');
    expect((await inject('POST', `/platform/application/${appId}/owner`, owner.token, { userId: leaver.userId })).statusCode).toBe(204);
    // The leaver changes something (a history entry in their name) and certifies a key (through the code).
    expect((await inject('POST', `/platform/application/${appId}`, leaver.token, { companyName: 'Renamed Co' })).statusCode).toBe(204);
    const holder = await certify(t, leaver.token);
    const lockId = await createLock(t, appId);
    expect((await execute(t, lockId, leaver.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
    const second = await signIn(leaver.email);

    expect((await inject('DELETE', '/account', leaver.token)).statusCode).toBe(204);
    for (const token of [leaver.token, second]) expect((await inject('GET', '/account', token)).statusCode).toBe(401);
    expect((await execute(t, lockId, leaver.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(401);
    expect((await inject('POST', '/auth/token', undefined, { email: leaver.email, password: 'page-pass' })).statusCode).toBe(401);
    expect(await t.database.db.select().from(users).where(eq(users.id, leaver.userId))).toHaveLength(0);
    expect(await t.database.db.select().from(certifiedKeys).where(eq(certifiedKeys.userId, leaver.userId))).toHaveLength(0);
    expect(await t.database.db.select().from(applicationOwners).where(eq(applicationOwners.applicationId, appId))).toHaveLength(1);

    const history = (await inject('GET', `/platform/application/${appId}/history`, owner.token)).json() as { items: { actor: { userId: string; email: string } }[] };
    const theirs = history.items.filter((e) => e.actor.userId === leaver.userId);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((e) => e.actor.email === accountErrors.deletedUser)).toBe(true);
    expect(JSON.stringify(history)).not.toContain(leaver.email);
    const log = ((await inject('GET', `/platform/application/${appId}/lock/${lockId}/log`, owner.token)).json() as { items: { actor: { userId: string; email: string } }[] }).items;
    expect(log.find((e) => e.actor?.userId === leaver.userId)?.actor.email).toBe(accountErrors.deletedUser);
    // The address is free again.
    expect((await inject('POST', '/auth/register', undefined, { email: leaver.email, password: 'page-pass' })).statusCode).toBe(200);
  });
});
