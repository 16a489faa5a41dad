import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createTestApp, eventually, testDbKind, uniqueEmail, type TestApp } from '../../test/helpers.js';
import type { Database } from '../db/client.js';
import { AccessCache, accessTags } from './access-cache.js';

let t: TestApp;
let b: { app: FastifyInstance; close: () => Promise<void> };
beforeAll(async () => {
  t = await createTestApp();
  b = await t.secondInstance();
});
afterAll(async () => {
  await b.close();
  await t.close();
});

type User = { token: string; userId: string; sessionId: string };
async function register(): Promise<User> {
  const body = (await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('cache'), password: 'cache-pass' } })).json();
  const claims = JSON.parse(Buffer.from(body.authToken.split('.')[1], 'base64url').toString());
  return { token: body.authToken, userId: claims.sub, sessionId: claims.sid };
}
const call = (app: FastifyInstance, u: User, method: string, url: string, payload?: object) =>
  app.inject({ method: method as 'GET', url: `/api${url}`, headers: { authorization: `Bearer ${u.token}` }, ...(payload ? { payload } : {}) });
async function create(u: User, name: string): Promise<string> {
  const res = await call(t.app, u, 'POST', '/platform/application', { name, companyName: 'Co', mailingAddress: '1 Road' });
  expect(res.statusCode).toBe(201);
  return res.headers.location!.toString().split('/').pop()!;
}
/**
 * Reads on the second instance until it keeps the access it looked up. The creation's own change reaches that
 * instance through the change feed a moment later, and when it lands after the read it rightly drops (or
 * never stores) what the read looked up, so the first read alone may leave nothing cached.
 */
async function readUntilCached(u: User, id: string): Promise<boolean> {
  return eventually(async () => {
    expect((await call(b.app, u, 'GET', `/platform/application/${id}`)).statusCode).toBe(200);
    return b.app.accessCache.get(`a|${u.sessionId}|${id}`) !== undefined;
  });
}

describe('access cache', () => {
  it('is live once the change feed is up, and keeps what authenticated reads looked up', async () => {
    expect(t.app.accessCache.isLive).toBe(true);
    expect(b.app.accessCache.isLive).toBe(true);
    const u = await register();
    const id = await create(u, 'Warm');
    const before = b.app.accessCache.size;
    expect(await readUntilCached(u, id)).toBe(true);
    expect((await call(b.app, u, 'GET', '/platform/application')).statusCode).toBe(200);
    expect(b.app.accessCache.get(`a|${u.sessionId}|${id}`)).toMatchObject({ userId: u.userId, owns: true });
    expect(typeof b.app.accessCache.get(`l|${u.userId}`)).toBe('string');
    expect(b.app.accessCache.size).toBe(before + 3); // session (from the list's auth), access, list
  });

  it('ignores a read that raced a change: set() with a mark taken before an invalidation stores nothing', async () => {
    const cache = t.app.accessCache;
    const mark = cache.mark();
    cache.invalidate(['a:unrelated']);
    cache.set('probe', 1, ['a:probe'], mark);
    expect(cache.get('probe')).toBeUndefined();
    const fresh = cache.mark();
    cache.set('probe', 2, ['a:probe'], fresh);
    expect(cache.get('probe')).toBe(2);
    cache.invalidate(['a:probe']);
    expect(cache.get('probe')).toBeUndefined();
  });

  it('drops what the database says changed, even a change made outside the service', async () => {
    const u = await register();
    const id = await create(u, 'Outside');
    expect(await readUntilCached(u, id)).toBe(true);
    expect((await call(b.app, u, 'GET', `/platform/application/${id}`)).json().name).toBe('Outside');
    await t.database.db.execute(sql`update applications set name = 'Renamed by SQL', version = version + 1 where id = ${id}`);
    expect(await eventually(async () => b.app.accessCache.get(`a|${u.sessionId}|${id}`) === undefined)).toBe(true);
    expect((await call(b.app, u, 'GET', `/platform/application/${id}`)).json().name).toBe('Renamed by SQL');
    await t.database.db.execute(sql`update sessions set revoked_at = now() where id = ${u.sessionId}`);
    expect(await eventually(async () => (await call(b.app, u, 'GET', `/platform/application/${id}`)).statusCode === 401)).toBe(true);
  });

  it('drops everything when one statement changes more than 100 rows', async () => {
    const u = await register();
    const id = await create(u, 'Bulk');
    await call(b.app, u, 'GET', `/platform/application/${id}`);
    expect(b.app.accessCache.size).toBeGreaterThan(0);
    await t.database.db.execute(
      sql`insert into applications (id, name, company_name, mailing_address) select gen_random_uuid(), 'Bulk ' || g, 'Bulk Co', 'Road' from generate_series(1, 101) g`,
    );
    await t.database.db.execute(sql`update applications set version = version + 1 where company_name = 'Bulk Co'`);
    expect(await eventually(async () => b.app.accessCache.size === 0)).toBe(true);
  });

  it('logging out on one instance ends the session on the other; on the same one at once', async () => {
    const u = await register();
    const id = await create(u, 'Logout');
    for (const app of [t.app, b.app]) expect((await call(app, u, 'GET', `/platform/application/${id}`)).statusCode).toBe(200);
    expect((await call(t.app, u, 'POST', '/auth/token/destroy')).statusCode).toBe(204);
    expect((await call(t.app, u, 'GET', `/platform/application/${id}`)).statusCode).toBe(401);
    expect((await call(t.app, u, 'GET', '/account')).statusCode).toBe(401);
    expect(await eventually(async () => (await call(b.app, u, 'GET', `/platform/application/${id}`)).statusCode === 401)).toBe(true);
    expect((await call(b.app, u, 'GET', '/platform/application')).statusCode).toBe(401);
  });

  it('a removed owner loses the application on every instance; a rename is seen in every list', async () => {
    const owner = await register();
    const removed = await register();
    const id = await create(owner, 'Shared');
    expect((await call(t.app, owner, 'POST', `/platform/application/${id}/owner`, { userId: removed.userId })).statusCode).toBe(204);
    for (const app of [t.app, b.app]) {
      expect((await call(app, removed, 'GET', `/platform/application/${id}`)).statusCode).toBe(200);
      expect((await call(app, removed, 'GET', '/platform/application')).json().map((a: { name: string }) => a.name)).toEqual(['Shared']);
    }
    expect((await call(t.app, owner, 'POST', `/platform/application/${id}`, { name: 'Shared 2' })).statusCode).toBe(204);
    expect((await call(t.app, removed, 'GET', '/platform/application')).json()[0].name).toBe('Shared 2');
    expect(await eventually(async () => (await call(b.app, removed, 'GET', '/platform/application')).json()[0]?.name === 'Shared 2')).toBe(true);
    expect((await call(t.app, owner, 'DELETE', `/platform/application/${id}/owner`, { userId: removed.userId })).statusCode).toBe(204);
    expect((await call(t.app, removed, 'GET', `/platform/application/${id}`)).statusCode).toBe(404);
    expect((await call(t.app, removed, 'GET', '/platform/application')).json()).toEqual([]);
    expect(await eventually(async () => (await call(b.app, removed, 'GET', `/platform/application/${id}`)).statusCode === 404)).toBe(true);
    // The removal's notices (the application's, then the user's) may reach the other instance one at a
    // time: the list is read once it has applied every change committed so far.
    await b.app.accessCache.sync();
    expect((await call(b.app, removed, 'GET', '/platform/application')).json()).toEqual([]);
  });

  it('sync() returns only once the notices of changes committed before it are applied, however late they come', async () => {
    // The same feed, with every notice handed over 200 ms late (in order), as over a slow link.
    const late: Pick<Database, 'listen' | 'notify'> = {
      listen: (channel, handlers) => t.database.listen(channel, { ...handlers, message: (payload) => void setTimeout(() => handlers.message(payload), 200) }),
      notify: (channel, payload) => t.database.notify(channel, payload),
    };
    const cache = new AccessCache({ syncTimeoutMs: 5000, heartbeatMs: 60_000 });
    await cache.start(late);
    try {
      const u = await register();
      const id = await create(u, 'Late');
      await cache.sync(); // the notices of the create have been applied
      cache.set('probe', 1, [accessTags.application(id)], cache.mark());
      await t.database.db.execute(sql`update applications set version = version + 1 where id = ${id}`);
      expect(cache.get('probe')).toBe(1); // its notice is still on the way
      await cache.sync();
      expect(cache.get('probe')).toBeUndefined();
    } finally {
      await cache.stop();
    }
  });

  it('turns itself off when its feed goes silent (found by its heartbeat), and is live again once notices flow', async () => {
    // The cache's heartbeat and time-out run on a clock the test moves, so that no heartbeat can time out
    // only because a loaded host was slow: each one either comes back or, while the feed is silent, cannot.
    // A heartbeat times out (500 ms) before the next is sent (1 s): at most one is ever on its way.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let silent = false;
    // This cache's own notices that came back (the other instances on the database send theirs too).
    const sent = new Set<string>();
    let heartbeatsBack = 0;
    const feed: Pick<Database, 'listen' | 'notify'> = {
      listen: (channel, handlers) =>
        t.database.listen(channel, {
          ...handlers,
          message: (payload) => {
            if (sent.has(payload)) heartbeatsBack++;
            handlers.message(payload);
          },
        }),
      // A silent feed: our own notices go nowhere, as over a connection that died without a word.
      notify: (channel, payload) => {
        if (!silent) sent.add(payload);
        return t.database.notify(silent ? 'latchkey_nowhere' : channel, payload);
      },
    };
    const cache = new AccessCache({ syncTimeoutMs: 500, heartbeatMs: 1000 });
    try {
      await cache.start(feed);
      expect(cache.isLive).toBe(true);
      cache.set('probe', 1, ['a:probe'], cache.mark());
      expect(cache.get('probe')).toBe(1);
      silent = true;
      await vi.advanceTimersByTimeAsync(1000); // a heartbeat is sent, into the silent feed
      expect(cache.get('probe')).toBe(1);
      await vi.advanceTimersByTimeAsync(500); // and times out: everything is dropped (once its notice is sent)
      await vi.waitFor(() => expect(cache.get('probe')).toBeUndefined(), { timeout: 30_000, interval: 10 });
      expect(heartbeatsBack).toBe(0);
      silent = false;
      // It subscribes afresh at once.
      await vi.waitFor(() => expect(cache.isLive).toBe(true), { timeout: 30_000, interval: 10 });
      cache.set('probe', 2, ['a:probe'], cache.mark());
      for (let n = 1; n <= 3; n++) {
        await vi.advanceTimersByTimeAsync(500); // the next heartbeat is sent
        await vi.waitFor(() => expect(heartbeatsBack).toBe(n), { timeout: 30_000, interval: 10 });
        await vi.advanceTimersByTimeAsync(500); // past its time-out: it came back, nothing is dropped
        expect(cache.isLive).toBe(true);
        expect(cache.get('probe')).toBe(2);
      }
    } finally {
      vi.useRealTimers();
      await cache.stop();
    }
  });

  it('stays off with ACCESS_CACHE=false: every read goes to the database, and logout still bites at once', async () => {
    const off = await createTestApp({ ACCESS_CACHE: 'false' });
    try {
      const body = (await off.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('off'), password: 'cache-pass' } })).json();
      const headers = { authorization: `Bearer ${body.authToken}` };
      expect((await off.app.inject({ url: '/api/platform/application', headers })).statusCode).toBe(200);
      expect(off.app.accessCache.isLive).toBe(false);
      expect(off.app.accessCache.size).toBe(0);
      expect((await off.app.inject({ method: 'POST', url: '/api/auth/token/destroy', headers })).statusCode).toBe(204);
      expect((await off.app.inject({ url: '/api/platform/application', headers })).statusCode).toBe(401);
    } finally {
      await off.close();
    }
  });

  // PGlite runs inside the process: there is no connection to lose, so skipped on PGlite.
  it.skipIf(testDbKind !== 'postgres')('stops answering while its LISTEN connection is lost, and comes back when it reconnects', async () => {
    const listening = async () =>
      ((await t.database.executeSql(`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %'`)).rows[0] as { n: number }).n;
    const feeds = await listening();
    const u = await register();
    const id = await create(u, 'Reconnect');
    await call(b.app, u, 'GET', `/platform/application/${id}`);
    // Ends every LISTEN connection on this database: both instances' feeds.
    await t.database.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`,
    );
    expect(await eventually(async () => !b.app.accessCache.isLive, 2000)).toBe(true);
    expect(b.app.accessCache.get(`a|${u.sessionId}|${id}`)).toBeUndefined();
    // Reads still work (from the database) while the feed is down.
    expect((await call(b.app, u, 'GET', `/platform/application/${id}`)).statusCode).toBe(200);
    // Every feed is back on a connection of its own (an instance may not yet have noticed that its old one
    // was ended, and look live on it until then), so the tests after this one meet live feeds.
    expect(await eventually(async () => (await listening()) === feeds && b.app.accessCache.isLive && t.app.accessCache.isLive)).toBe(true);
    expect((await call(b.app, u, 'GET', `/platform/application/${id}`)).statusCode).toBe(200);
    expect(b.app.accessCache.get(`a|${u.sessionId}|${id}`)).toBeDefined();
  });
});

describe('access cache bounds', () => {
  /** A feed that is up at once and never sends anything: enough to make a cache live. */
  const quietFeed = {
    listen: async (_channel: string, handlers: { up: () => void }) => {
      handlers.up();
      return async () => {};
    },
    notify: async () => {},
  } as unknown as Pick<Database, 'listen' | 'notify'>;

  it('keeps the most recently used entries within maxEntries, and an evicted entry leaves no tags behind', async () => {
    const cache = new AccessCache({ maxEntries: 2, heartbeatMs: 60_000 });
    await cache.start(quietFeed);
    cache.set('one', 1, ['u:1'], cache.mark());
    cache.set('two', 2, ['u:2'], cache.mark());
    expect(cache.get('one')).toBe(1); // 'one' is now the most recently used
    cache.set('three', 3, ['u:1'], cache.mark());
    expect(cache.size).toBe(2);
    expect(cache.get('two')).toBeUndefined();
    expect(cache.get('one')).toBe(1);
    expect(cache.get('three')).toBe(3);
    // Setting a key again replaces its tags: 'one' no longer answers to u:1 once it is tagged u:9.
    cache.set('one', 10, ['u:9'], cache.mark());
    cache.invalidate(['u:1']);
    expect(cache.get('three')).toBeUndefined();
    expect(cache.get('one')).toBe(10);
    cache.invalidate(['u:9']);
    expect(cache.size).toBe(0);
    await cache.stop();
  });
});
