import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import {
  DEFAULT_LOCK_NAME,
  lockErrors,
  lockMessages,
  MAX_LOCKS_PER_APPLICATION,
  messages,
  type Lock,
  type LockLogPage,
} from '@latchkey/contract';
import { locks } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { toLock } from './locks.service.js';

/** The owner's sandbox locks — Front Door on creation, CRUD, settings, derived state, ownership. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId);
});
afterAll(() => t?.close());

const locksUrl = (app = appId) => `/api/platform/application/${app}/lock`;
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, payload?: object, token = owner.token) =>
  t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
const addLock = async (name: string, app = appId): Promise<Lock> => {
  const res = await call('POST', locksUrl(app), { name });
  expect(res.statusCode).toBe(201);
  return res.json() as Lock;
};

describe('Front Door', () => {
  it('is there as soon as an application is created through the API, locked and with defaults', async () => {
    const created = await call('POST', '/api/platform/application', { name: 'Sandbox App', companyName: 'Co', mailingAddress: '1 Road' });
    expect(created.statusCode).toBe(201);
    const id = created.headers.location!.toString().split('/').pop()!;
    const res = await call('GET', locksUrl(id));
    expect(res.statusCode).toBe(200);
    const list = res.json() as Lock[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      applicationId: id,
      name: DEFAULT_LOCK_NAME,
      colour: null,
      settings: { unlockTime: 5, usageRequirements: {} },
      state: { locked: true, connected: true, unlockedUntil: null },
    });
  });
});

describe('the sandbox lock in the creator’s language', () => {
  it('is "Haustür" for an application created from a German portal, "Front Door" otherwise', async () => {
    const create = (language: string) =>
      t.app.inject({ method: 'POST', url: '/api/platform/application', headers: { ...bearer(owner.token), 'accept-language': language }, payload: { name: 'Sandbox App', companyName: 'Co', mailingAddress: '1 Road' } });
    const lockNames = async (language: string) => {
      const id = (await create(language)).headers.location!.toString().split('/').pop()!;
      return ((await call('GET', locksUrl(id))).json() as Lock[]).map((l) => l.name);
    };
    expect(await lockNames('de-DE,de;q=0.9')).toEqual(['Haustür']);
    expect(await lockNames('fr-FR')).toEqual([DEFAULT_LOCK_NAME]);
  });
});

describe('create, read, update, delete', () => {
  it('creates a lock: 201, Location and the lock', async () => {
    const res = await call('POST', locksUrl(), { name: '  Side Gate ', colour: '#12ab34' });
    expect(res.statusCode).toBe(201);
    const lock = res.json() as Lock;
    expect(lock).toMatchObject({ name: 'Side Gate', colour: '#12ab34', applicationId: appId, state: { locked: true } });
    expect(res.headers.location).toBe(`http://localhost:3000/api/platform/application/${appId}/lock/${lock.id}`);
    expect((await call('GET', `${locksUrl()}/${lock.id}`)).json()).toEqual(lock);
    expect(((await call('GET', locksUrl())).json() as Lock[]).map((l) => l.id)).toContain(lock.id);
  });

  it.each([
    [{}, messages.required],
    [{ name: '   ' }, messages.required],
    [{ name: 'x'.repeat(5000) }, messages.tooLong],
    [{ name: 'Gate', colour: 'red' }, messages.invalidHexColour],
  ])('refuses %j with a clear message and adds nothing', async (payload, message) => {
    const before = ((await call('GET', locksUrl())).json() as Lock[]).length;
    const res = await call('POST', locksUrl(), payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message });
    expect((await call('GET', locksUrl())).json()).toHaveLength(before);
  });

  it('renames, recolours and sets up a lock, logging only the settings change', async () => {
    const lock = await addLock('Garage');
    const url = `${locksUrl()}/${lock.id}`;
    const renamed = await call('PUT', url, { name: 'Big Garage', colour: '#fff' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Big Garage', colour: '#fff', settings: lock.settings });

    const usageRequirements = {
      time: [{ start: '08:00', end: '18:30', timezone: 'Europe/Berlin', days: ['MONDAY', 'FRIDAY'] }],
      location: { latitude: 52.52, longitude: 13.405, radius: 150, accuracy: 'HIGH', enabled: true },
    };
    const set = await call('PUT', url, { settings: { unlockTime: 12, usageRequirements } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ name: 'Big Garage', settings: { unlockTime: 12, usageRequirements } });
    expect((await call('GET', url)).json()).toMatchObject({ settings: { unlockTime: 12, usageRequirements } });

    const log = (await call('GET', `${url}/log`)).json() as LockLogPage;
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({ type: 'SETTINGS', subject: 'unlockTime, usageRequirements', rejected: false, actor: { userId: owner.userId, email: owner.email } });

    // The same settings again change nothing, so nothing more is logged; null colour clears it.
    await call('PUT', url, { settings: { unlockTime: 12 }, colour: null });
    expect(((await call('GET', `${url}/log`)).json() as LockLogPage).items).toHaveLength(1);
    expect((await call('GET', url)).json()).toMatchObject({ colour: null });
  });

  const rule = { start: '08:00', end: '18:00', timezone: 'Europe/London', days: ['MONDAY'] };
  const location = { latitude: 10, longitude: 10, radius: 100, accuracy: 'FINE', enabled: true };
  it.each([
    [{ settings: { unlockTime: 0 } }, lockMessages.unlockTimeRange],
    [{ settings: { unlockTime: 61 } }, lockMessages.unlockTimeRange],
    [{ settings: { unlockTime: 2.5 } }, lockMessages.unlockTimeRange],
    [{ settings: { unlockTime: '5' } }, messages.required],
    [{ settings: { usageRequirements: { time: [{ ...rule, days: [] }] } } }, lockMessages.minimumOneDay],
    [{ settings: { usageRequirements: { time: [{ ...rule, timezone: 'Mars/Olympus' }] } } }, lockMessages.invalidTimeZone],
    [{ settings: { usageRequirements: { time: [{ ...rule, start: '25:00' }] } } }, lockMessages.invalidTime],
    [{ settings: { usageRequirements: { location: { ...location, latitude: 91 } } } }, lockMessages.latitudeRange],
    [{ settings: { usageRequirements: { location: { ...location, longitude: -181 } } } }, lockMessages.longitudeRange],
    [{ settings: { usageRequirements: { location: { ...location, radius: 0 } } } }, lockMessages.radiusRange],
    [{ name: '' }, messages.required],
  ])('refuses the update %j with a clear message and changes nothing', async (payload, message) => {
    const lock = await addLock('Unchanged');
    const res = await call('PUT', `${locksUrl()}/${lock.id}`, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message });
    expect((await call('GET', `${locksUrl()}/${lock.id}`)).json()).toEqual(lock);
    expect(((await call('GET', `${locksUrl()}/${lock.id}/log`)).json() as LockLogPage).items).toEqual([]);
  });

  it('removes a lock: 204, then it is gone', async () => {
    const lock = await addLock('Temporary');
    const url = `${locksUrl()}/${lock.id}`;
    expect((await call('DELETE', url)).statusCode).toBe(204);
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(method, url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ message: lockErrors.lockNotFound });
    }
  });

  it(`stops at ${MAX_LOCKS_PER_APPLICATION} locks, also when adds race`, async () => {
    const id = await createApplication(t, owner.userId, 'Full App');
    await t.app.db.insert(locks).values(Array.from({ length: MAX_LOCKS_PER_APPLICATION - 3 }, (_, i) => ({ applicationId: id, name: `L${i}` })));
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call('POST', locksUrl(id), { name: `Race ${i}` })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    expect(results.find((r) => r.statusCode === 409)!.json()).toMatchObject({ code: 409, message: lockErrors.tooManyLocks });
    expect((await call('GET', locksUrl(id))).json()).toHaveLength(MAX_LOCKS_PER_APPLICATION);
  });
});

describe('state', () => {
  it('is unlocked while unlocked_until is ahead, and locked again by itself once it passes', async () => {
    const lock = await addLock('Timed');
    const until = new Date(Date.now() + 30_000);
    await t.app.db.update(locks).set({ unlockedUntil: until }).where(eq(locks.id, lock.id));
    expect((await call('GET', `${locksUrl()}/${lock.id}`)).json()).toMatchObject({ state: { locked: false, unlockedUntil: until.getTime() } });
    const [row] = await t.app.db.select().from(locks).where(eq(locks.id, lock.id));
    expect(toLock(row!, until.getTime() - 1).state.locked).toBe(false);
    expect(toLock(row!, until.getTime()).state).toEqual({ locked: true, connected: true, unlockedUntil: null });
  });
});

describe('who may see and change locks', () => {
  let lock: Lock;
  let foreign: Lock;
  beforeAll(async () => {
    lock = await addLock('Owned');
    const otherApp = await createApplication(t, stranger.userId, 'Other');
    const res = await call('POST', locksUrl(otherApp), { name: 'Foreign' }, stranger.token);
    foreign = res.json() as Lock;
  });

  it('answers a stranger 404 on every lock route, and changes nothing', async () => {
    const url = `${locksUrl()}/${lock.id}`;
    for (const [method, path, payload] of [
      ['GET', locksUrl(), undefined],
      ['POST', locksUrl(), { name: 'Intruder' }],
      ['POST', locksUrl(), {}],
      ['GET', url, undefined],
      ['PUT', url, { name: 'Hacked' }],
      ['DELETE', url, undefined],
    ] as const) {
      const res = await call(method, path, payload, stranger.token);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json()).toMatchObject({ message: 'Application not found' });
    }
    expect((await call('GET', url)).json()).toEqual(lock);
  });

  it("answers 404 for another application's lock, an unknown one and a malformed id", async () => {
    for (const id of [foreign.id, crypto.randomUUID(), 'nope']) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const res = await call(method, `${locksUrl()}/${id}`, method === 'PUT' ? { name: 'X' } : undefined);
        expect(res.statusCode, `${method} ${id}`).toBe(404);
        expect(res.json()).toMatchObject({ message: lockErrors.lockNotFound });
      }
    }
    expect((await call('GET', `${locksUrl(foreign.applicationId)}/${foreign.id}`, undefined, stranger.token)).json()).toMatchObject({ name: 'Foreign' });
  });

  it('needs a signed-in caller', async () => {
    expect((await t.app.inject({ method: 'GET', url: locksUrl() })).statusCode).toBe(401);
  });
});
