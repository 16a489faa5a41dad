import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Lock, LockLogEntry } from '@latchkey/contract';
import { locks } from '../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { recordActivity } from '../activity/activity.service.js';

/** Live updates as server-sent events, from a change on one instance to a client of another. */
let t: TestApp;
let second: Awaited<ReturnType<TestApp['secondInstance']>>;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let secondUrl: string;

interface SseEvent {
  event: string;
  data: string;
}

/** A real streaming client (what the portal does with fetch): collects events and comments as they come. */
async function connect(app: string, token: string, base = secondUrl) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/platform/application/${app}/lock/events`, { headers: bearer(token), signal: controller.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  const body = res.ok ? res.body : null;
  if (body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        const reader = body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (block.startsWith(':')) comments.push(block.slice(1).trim());
            else {
              const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
              events.push({ event: fields.event ?? '', data: fields.data ?? '' });
            }
          }
        }
      } catch {
        // aborted by the test
      }
      ended = true;
    })();
  }
  const find = async <T>(event: string, match: (data: T) => boolean): Promise<T | undefined> => {
    let found: T | undefined;
    await eventually(() => {
      found = events.filter((e) => e.event === event).map((e) => JSON.parse(e.data) as T).find(match);
      return found !== undefined;
    });
    return found;
  };
  return { res, events, comments, find, ended: () => ended, close: () => controller.abort() };
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}`;
}

beforeAll(async () => {
  t = await createTestApp({ SSE_KEEPALIVE_SECONDS: '1' });
  second = await t.secondInstance();
  secondUrl = await listen(second.app);
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId);
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

const lockUrl = (id = '') => `/api/platform/application/${appId}/lock${id ? `/${id}` : ''}`;
const call = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: bearer(owner.token), ...(payload ? { payload } : {}) });

describe('lock events across instances', () => {
  it("streams a change made on one instance to another instance's client: locks, state, log, shares, removal", async () => {
    const client = await connect(appId, owner.token);
    expect(client.res.status).toBe(200);
    expect(client.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(client.res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await eventually(() => client.comments.includes('connected'))).toBe(true);
    expect(await eventually(() => second.app.liveEvents.size === 1)).toBe(true);

    const created = (await call('POST', lockUrl(), { name: 'Live Door' })).json() as Lock;
    expect(await client.find<Lock>('lock', (l) => l.id === created.id && l.name === 'Live Door')).toMatchObject({ state: { locked: true } });

    await call('PUT', lockUrl(created.id), { name: 'Renamed Door' });
    expect(await client.find<Lock>('lock', (l) => l.name === 'Renamed Door')).toBeDefined();

    const until = new Date(Date.now() + 20_000);
    await t.app.db.update(locks).set({ unlockedUntil: until }).where(eq(locks.id, created.id));
    expect(await client.find<Lock>('lock', (l) => !l.state.locked)).toMatchObject({ id: created.id, state: { unlockedUntil: until.getTime() } });

    const entry = await recordActivity(t.app.db, { lockId: created.id, applicationId: appId, type: 'UNLOCK', actor: null, rejected: true, reason: 'Outside the time window' });
    expect(await client.find<LockLogEntry>('activity', (e) => e.id === entry.id)).toEqual(entry);

    const shared = (await call('POST', `${lockUrl(created.id)}/user`, { email: 'live@example.com' })).json() as { userId: string };
    expect(await client.find<{ lockId: string; userId: string }>('share', (s) => s.userId === shared.userId)).toEqual({ lockId: created.id, userId: shared.userId });

    await call('DELETE', lockUrl(created.id));
    expect(await client.find<{ id: string }>('lock-removed', (l) => l.id === created.id)).toBeDefined();
    client.close();
    expect(await eventually(() => second.app.liveEvents.size === 0)).toBe(true);
  });

  it("sends nothing of another application's locks", async () => {
    const otherApp = await createApplication(t, stranger.userId, 'Other');
    const client = await connect(appId, owner.token);
    const foreign = await t.app.inject({ method: 'POST', url: `/api/platform/application/${otherApp}/lock`, headers: bearer(stranger.token), payload: { name: 'Foreign Door' } });
    expect(foreign.statusCode).toBe(201);
    // A marker change of our own afterwards: once it arrives, the foreign one would have too.
    await call('POST', lockUrl(), { name: 'Marker Door' });
    expect(await client.find<Lock>('lock', (l) => l.name === 'Marker Door')).toBeDefined();
    expect(client.events.some((e) => e.data.includes('Foreign Door'))).toBe(false);
    client.close();
  });

  it('keeps an idle stream alive with comments', async () => {
    const client = await connect(appId, owner.token);
    expect(await eventually(() => client.comments.includes('keep-alive'), 3000)).toBe(true);
    client.close();
  });
});

describe('who may follow', () => {
  it('answers a stranger 404 and no token 401, as JSON, without subscribing them', async () => {
    // The earlier tests' clients are gone once their aborts have reached the server.
    expect(await eventually(() => second.app.liveEvents.size === 0)).toBe(true);
    const asStranger = await connect(appId, stranger.token);
    expect(asStranger.res.status).toBe(404);
    expect(await asStranger.res.json()).toMatchObject({ code: 404, message: 'Application not found' });
    const anonymous = await fetch(`${secondUrl}/api/platform/application/${appId}/lock/events`);
    expect(anonymous.status).toBe(401);
    expect(second.app.liveEvents.size).toBe(0);
  });
});

describe('closing', () => {
  it('ends open streams when the instance closes', async () => {
    const third = await t.secondInstance();
    const client = await connect(appId, owner.token, await listen(third.app));
    expect(await eventually(() => client.comments.includes('connected'))).toBe(true);
    await third.close();
    expect(await eventually(() => client.ended())).toBe(true);
  });
});
