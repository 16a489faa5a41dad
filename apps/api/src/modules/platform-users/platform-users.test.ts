import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApplicationUser, ApplicationUserList } from '@latchkey/contract';
import { applicationUsers } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { addIssuer, addKey, bearer, createApplication, createOwner, signUserToken, type SigningKey } from '../../../test/fixtures/platform-users.js';

/** Application users — first sign-in, updates, pending users, paging, removal, ownership. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let key: SigningKey;
const ISS = 'https://id.users-test.example';

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  await addIssuer(t, appId, ISS);
  key = await addKey(t, appId, 'ES256');
});
afterAll(() => t?.close());

const usersUrl = (id = appId) => `/api/platform/application/${id}/user`;
const signIn = async (claims: { sub: string; email?: string; name?: string }) =>
  t.app.inject({ method: 'GET', url: '/api/platform/auth', headers: bearer(await signUserToken(key, { iss: ISS, ...claims })) });
const list = (query = '', token = owner.token) => t.app.inject({ method: 'GET', url: `${usersUrl()}${query}`, headers: bearer(token) });
const add = (email: string, token = owner.token) => t.app.inject({ method: 'POST', url: usersUrl(), headers: bearer(token), payload: { email } });
const remove = (userId: string, token = owner.token) => t.app.inject({ method: 'DELETE', url: usersUrl(), headers: bearer(token), payload: { userId } });
const find = async (search: string) => ((await list(`?search=${encodeURIComponent(search)}`)).json() as ApplicationUserList).users;

describe('first sign-in and later tokens', () => {
  it('creates the user on first use, then updates email and name', async () => {
    const first = await signIn({ sub: 'u-100', email: 'Ada@Example.com', name: 'Ada' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ applicationId: appId, sub: 'u-100', email: 'ada@example.com', displayName: 'Ada' });
    const [created] = await find('ada@example.com');
    expect(created).toMatchObject({ sub: 'u-100', status: 'active', displayName: 'Ada' });
    expect(created!.lastSeenAt).toBeGreaterThan(0);

    const second = await signIn({ sub: 'u-100', email: 'ada.l@example.com', name: 'Ada Lovelace' });
    expect(second.json()).toMatchObject({ email: 'ada.l@example.com', displayName: 'Ada Lovelace' });
    const after = await find('Lovelace');
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ userId: created!.userId, email: 'ada.l@example.com', createdAt: created!.createdAt });
    expect(await find('ada@example.com')).toEqual([]);
  });

  it('keeps email and name when a later token leaves them out', async () => {
    await signIn({ sub: 'u-101', email: 'grace@example.com', name: 'Grace' });
    const res = await signIn({ sub: 'u-101' });
    expect(res.json()).toMatchObject({ email: 'grace@example.com', displayName: 'Grace' });
  });

  it('creates one user when the first tokens arrive together', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => signIn({ sub: 'u-race', email: 'race@example.com' })));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const rows = await t.database.db.select().from(applicationUsers).where(eq(applicationUsers.sub, 'u-race'));
    expect(rows).toHaveLength(1);
  });
});

describe('pending users added by email', () => {
  it('adds a pending user, refuses a duplicate, and activates it on first sign-in', async () => {
    const res = await add('New.Partner@Example.com');
    expect(res.statusCode).toBe(201);
    const pending = res.json() as ApplicationUser;
    expect(pending).toMatchObject({ sub: null, email: 'new.partner@example.com', status: 'pending', displayName: null, lastSeenAt: null });
    expect(pending.createdAt).toBeCloseTo(Date.now() / 1000, -1);

    const again = await add('new.partner@EXAMPLE.com');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ code: 409, message: 'This user has already been added to the application' });

    const signedIn = await signIn({ sub: 'u-200', email: 'new.partner@example.com', name: 'Newcomer' });
    expect(signedIn.statusCode).toBe(200);
    const users = await find('new.partner');
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ userId: pending.userId, sub: 'u-200', status: 'active', displayName: 'Newcomer', createdAt: pending.createdAt });
  });

  it('refuses to add the email of an active user', async () => {
    await signIn({ sub: 'u-201', email: 'active@example.com' });
    expect((await add('ACTIVE@example.com')).statusCode).toBe(409);
  });

  it('fulfils an invitation when a known user takes on its email', async () => {
    await signIn({ sub: 'u-202', email: 'before@example.com' });
    expect((await add('after@example.com')).statusCode).toBe(201);
    await signIn({ sub: 'u-202', email: 'after@example.com' });
    const users = await find('after@example.com');
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ sub: 'u-202', status: 'active' });
  });

  it('validates the email', async () => {
    const res = await add('not-an-email');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Invalid email address');
  });
});

describe('removing users', () => {
  it('removes a user (204), then 404', async () => {
    const created = (await add('leaving@example.com')).json() as ApplicationUser;
    expect((await remove(created.userId)).statusCode).toBe(204);
    expect(await find('leaving@example.com')).toEqual([]);
    const again = await remove(created.userId);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ code: 404, message: 'This user is not a user of the application' });
    expect((await remove('not-a-uuid')).statusCode).toBe(400);
  });

  it("cannot remove another application's user through this one", async () => {
    const otherApp = await createApplication(t, owner.userId, 'Other');
    const [foreign] = await t.database.db.insert(applicationUsers).values({ applicationId: otherApp, email: 'x@example.com', status: 'pending' }).returning();
    expect((await remove(foreign!.id)).statusCode).toBe(404);
  });
});

describe('paging', () => {
  it('pages 120 users as 100 + 20 in a stable order; pageSize 101 is refused', async () => {
    const pagedApp = await createApplication(t, owner.userId, 'Paged');
    // One statement: every row gets the same created_at, so the id breaks the tie.
    await t.database.db.insert(applicationUsers).values(
      Array.from({ length: 120 }, (_, i) => ({ applicationId: pagedApp, sub: `p-${i}`, email: `p${i}@example.com`, status: 'active' as const })),
    );
    const get = (q: string) => t.app.inject({ url: `${usersUrl(pagedApp)}${q}`, headers: bearer(owner.token) });
    const first = (await get('?pageSize=100')).json() as ApplicationUserList;
    expect(first.users).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    // Added between the pages: appears at the end, never shifts the page boundary.
    await t.database.db.insert(applicationUsers).values({ applicationId: pagedApp, sub: 'late', status: 'active' });
    const second = (await get(`?pageSize=100&cursor=${encodeURIComponent(first.nextCursor!)}`)).json() as ApplicationUserList;
    expect(second.users).toHaveLength(21);
    expect(second.nextCursor).toBeNull();
    const subs = [...first.users, ...second.users].map((u) => u.sub);
    expect(new Set(subs).size).toBe(121);
    expect(subs.at(-1)).toBe('late');

    const tooBig = await get('?pageSize=101');
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json().message).toBe('At most 100 users per page');
    expect((await get('?pageSize=0')).statusCode).toBe(400);
    const badCursor = await get('?cursor=garbage');
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json().message).toMatch(/page link is not valid/);
    // The right shape, but no time PostgreSQL holds: was a 500.
    for (const time of ['9999-99-99T99:99:99.000000Z', '0000-00-00T00:00:00.000000Z', '2026-02-30T00:00:00.000000Z']) {
      const cursor = Buffer.from(JSON.stringify([time, '00000000-0000-4000-8000-000000000000'])).toString('base64url');
      const bad = await get(`?cursor=${cursor}`);
      expect(bad.statusCode, time).toBe(400);
      expect(bad.json().message).toMatch(/page link is not valid/);
    }
  });

  it('walks small pages with search, default page size 50', async () => {
    const searchApp = await createApplication(t, owner.userId, 'Search');
    await t.database.db.insert(applicationUsers).values(
      Array.from({ length: 7 }, (_, i) => ({ applicationId: searchApp, sub: `s-${i}`, displayName: i % 2 ? `Odd_${i}` : `Even ${i}`, status: 'active' as const })),
    );
    const get = (q: string) => t.app.inject({ url: `${usersUrl(searchApp)}${q}`, headers: bearer(owner.token) });
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = (await get(`?search=odd&pageSize=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json() as ApplicationUserList;
      seen.push(...page.users.map((u) => u.displayName!));
      cursor = page.nextCursor;
    }
    expect(seen.sort()).toEqual(['Odd_1', 'Odd_3', 'Odd_5']);
    // LIKE wildcards in the search are literal characters.
    expect(((await get('?search=_')).json() as ApplicationUserList).users).toHaveLength(3);
    expect(((await get('')).json() as ApplicationUserList).users).toHaveLength(7);
  });
});

describe('ownership and token kinds', () => {
  it('answers 404 to a non-owner on every user route', async () => {
    const user = (await add('owned@example.com')).json() as ApplicationUser;
    for (const res of [await list('', stranger.token), await add('x@example.com', stranger.token), await remove(user.userId, stranger.token)]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 404, message: 'Application not found' });
    }
  });

  // A valid application token whose sub even equals the owner's portal user id: still not a portal token.
  const ownerLookalike = () => signUserToken(key, { iss: ISS, sub: owner.userId, email: owner.email });

  it("refuses an application-signed token in the portal's authenticate and on the user routes", async () => {
    const appToken = await ownerLookalike();
    expect((await t.app.inject({ url: '/api/platform/auth', headers: bearer(appToken) })).statusCode).toBe(200);
    const request = { headers: { authorization: `Bearer ${appToken}` } } as FastifyRequest;
    const refused = await new Promise<Error | undefined>((resolve) => t.app.authenticate(request, {} as FastifyReply, resolve));
    expect(refused).toMatchObject({ statusCode: 401 });
    for (const res of [await list('', appToken), await add('y@example.com', appToken), await remove(owner.userId, appToken)]) {
      expect(res.statusCode).toBe(401);
    }
  });

  it('refuses an application-signed token on GET /platform/application', async () => {
    const res = await t.app.inject({ url: '/api/platform/application', headers: bearer(await ownerLookalike()) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 401, message: 'You need to sign in' });
  });

  it('needs a portal token', async () => {
    expect((await t.app.inject({ url: usersUrl() })).statusCode).toBe(401);
  });
});
