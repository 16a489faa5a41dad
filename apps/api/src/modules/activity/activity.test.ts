import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockMessages, type LockLogEntry, type LockLogPage } from '@latchkey/contract';
import { lockActivity, locks } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { listActivity, recordActivity } from './activity.service.js';

/** A lock's activity log — recording, newest-first cursor paging, time filters, ownership. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let otherAppId: string;
let lockId: string;
let otherLockId: string;

async function insertLock(applicationId: string, name: string): Promise<string> {
  const [row] = await t.app.db.insert(locks).values({ applicationId, name }).returning();
  return row!.id;
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId);
  otherAppId = await createApplication(t, stranger.userId);
  lockId = await insertLock(appId, 'Log Door');
  otherLockId = await insertLock(otherAppId, 'Foreign Door');
});
afterAll(() => t?.close());

const logUrl = (id = lockId, query = '', app = appId) => `/api/platform/application/${app}/lock/${id}/log${query}`;
const getLog = (query = '', token = owner.token, id = lockId) => t.app.inject({ method: 'GET', url: logUrl(id, query), headers: bearer(token) });

describe('recordActivity', () => {
  it('stores an entry with its actor, subject and reason, and returns it as the contract shape', async () => {
    const actor = { userId: crypto.randomUUID(), email: 'ada@example.com', displayName: 'Ada' };
    const entry = await recordActivity(t.app.db, { lockId, applicationId: appId, type: 'UNLOCK', actor, rejected: true, reason: 'Outside the time window' });
    expect(entry).toMatchObject({ lockId, type: 'UNLOCK', actor, subject: null, rejected: true, reason: 'Outside the time window' });
    expect(entry.timestamp).toBeGreaterThan(Date.now() / 1000 - 60);
    const page = (await getLog()).json() as LockLogPage;
    expect(page.items[0]).toEqual(entry);
  });

  it('records the platform itself as an empty actor', async () => {
    const entry = await recordActivity(t.app.db, { lockId, applicationId: appId, type: 'LOCK', actor: null });
    expect(entry.actor).toEqual({ userId: null, email: null, displayName: null });
    expect(entry.rejected).toBe(false);
  });
});

describe('paging and time filters', () => {
  let pagedLock: string;
  /** 25 entries, one a minute from base, and 5 more sharing one instant (so only seq orders them). */
  const base = Date.UTC(2026, 0, 1, 12, 0, 0);
  beforeAll(async () => {
    pagedLock = await insertLock(appId, 'Paged Door');
    const rows = Array.from({ length: 25 }, (_, i) => ({ lockId: pagedLock, applicationId: appId, type: 'UNLOCK' as const, at: new Date(base + i * 60_000), subject: `m${i}` }));
    await t.app.db.insert(lockActivity).values(rows);
    const tied = Array.from({ length: 5 }, (_, i) => ({ lockId: pagedLock, applicationId: appId, type: 'LOCK' as const, at: new Date(base + 30 * 60_000), subject: `tie${i}` }));
    for (const row of tied) await t.app.db.insert(lockActivity).values(row);
  });

  async function walk(query: string): Promise<LockLogEntry[]> {
    const all: LockLogEntry[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const res = await getLog(`${query}${cursor ? `&cursor=${cursor}` : ''}`, owner.token, pagedLock);
      expect(res.statusCode).toBe(200);
      const page = res.json() as LockLogPage;
      all.push(...page.items);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    return all;
  }

  it('walks every entry once, newest first, ties broken by insertion order', async () => {
    const all = await walk('?pageSize=7');
    expect(all).toHaveLength(30);
    expect(new Set(all.map((e) => e.id)).size).toBe(30);
    expect(all.slice(0, 5).map((e) => e.subject)).toEqual(['tie4', 'tie3', 'tie2', 'tie1', 'tie0']);
    expect(all.slice(5).map((e) => e.subject)).toEqual(Array.from({ length: 25 }, (_, i) => `m${24 - i}`));
  });

  it('answers 50 by default and no cursor on the last page', async () => {
    const page = (await getLog('', owner.token, pagedLock)).json() as LockLogPage;
    expect(page.items).toHaveLength(30);
    expect(page.nextCursor).toBeNull();
  });

  it('keeps inclusive start and end bounds in epoch seconds, also while paging', async () => {
    const start = (base + 5 * 60_000) / 1000;
    const end = (base + 9 * 60_000) / 1000;
    const all = await walk(`?start=${start}&end=${end}&pageSize=2`);
    expect(all.map((e) => e.subject)).toEqual(['m9', 'm8', 'm7', 'm6', 'm5']);
    expect((await walk(`?start=${(base + 24 * 60_000) / 1000}`)).map((e) => e.subject)).toEqual(['tie4', 'tie3', 'tie2', 'tie1', 'tie0', 'm24']);
    expect(await walk(`?end=${base / 1000 - 1}`)).toEqual([]);
  });

  it('pages with the service alone, as the device log does', async () => {
    const first = await listActivity(t.app.db, pagedLock, { pageSize: 3 });
    const second = await listActivity(t.app.db, pagedLock, { pageSize: 3, cursor: first.nextCursor! });
    expect(first.items.map((e) => e.subject)).toEqual(['tie4', 'tie3', 'tie2']);
    expect(second.items.map((e) => e.subject)).toEqual(['tie1', 'tie0', 'm24']);
  });
});

describe('bad input', () => {
  it.each([
    ['?cursor=not-a-cursor', lockMessages.invalidCursor],
    [`?cursor=${Buffer.from(JSON.stringify(['2026-01-01', 1])).toString('base64url')}`, lockMessages.invalidCursor],
    [`?cursor=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000000Z', -1])).toString('base64url')}`, lockMessages.invalidCursor],
    [`?cursor=${'x'.repeat(201)}`, lockMessages.invalidCursor],
    // The right shape, but no time PostgreSQL (or the contract's epoch bounds) holds: was a 500.
    [`?cursor=${Buffer.from(JSON.stringify(['9999-99-99T99:99:99.000000Z', 1])).toString('base64url')}`, lockMessages.invalidCursor],
    [`?cursor=${Buffer.from(JSON.stringify(['0000-00-00T00:00:00.000000Z', 1])).toString('base64url')}`, lockMessages.invalidCursor],
    [`?cursor=${Buffer.from(JSON.stringify(['2026-02-30T00:00:00.000000Z', 1])).toString('base64url')}`, lockMessages.invalidCursor],
    [`?cursor=${Buffer.from(JSON.stringify(['1969-12-31T23:59:59.000000Z', 1])).toString('base64url')}`, lockMessages.invalidCursor],
    ['?start=yesterday', lockMessages.timeBoundNumber],
    ['?end=-5', lockMessages.timeBoundNumber],
    ['?start=200&end=100', lockMessages.endBeforeStart],
    ['?pageSize=0', lockMessages.pageSizeRange],
    ['?pageSize=101', lockMessages.pageSizeRange],
    ['?pageSize=2.5', lockMessages.pageSizeRange],
    ['?pageSize=ten', lockMessages.pageSizeRange],
  ])('%s → 400 with a clear message', async (query, message) => {
    const res = await getLog(query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message });
  });
});

describe('who may read it', () => {
  it('needs a signed-in caller', async () => {
    expect((await t.app.inject({ method: 'GET', url: logUrl() })).statusCode).toBe(401);
  });

  it('is 404 for a stranger, whatever the query', async () => {
    for (const query of ['', '?pageSize=0', '?cursor=bad']) {
      const res = await getLog(query, stranger.token);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, message: 'Application not found' });
    }
  });

  it('is 404 for a lock of another application, an unknown lock and a malformed id', async () => {
    for (const id of [otherLockId, crypto.randomUUID(), 'not-a-uuid']) {
      const res = await getLog('', owner.token, id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, message: 'Lock not found' });
    }
  });
});
