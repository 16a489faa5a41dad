import { once } from 'node:events';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACTIVITY_EXPORT_COLUMNS, LOCK_ACTIVITY_EXPORT_COLUMNS, apiErrors, lockErrors, lockMessages } from '@latchkey/contract';
import { lockActivity, locks } from '../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { ACTIVITY_EXPORT_BATCH, READ_AHEAD_BYTES, activityCsv, activityCsvStream, exportFileName } from './activity-export.service.js';

/** The activity log as CSV: columns, quoting, formula guard, bounds, order, batches, ownership. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let otherAppId: string;

async function insertLock(applicationId: string, name: string): Promise<string> {
  const [row] = await t.app.db.insert(locks).values({ applicationId, name }).returning();
  return row!.id;
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId, 'Ächt Bank, HQ');
  otherAppId = await createApplication(t, stranger.userId);
});
afterAll(() => t?.close());

const lockCsvUrl = (lockId: string, query = '', app = appId) => `/api/platform/application/${app}/lock/${lockId}/log.csv${query}`;
const appCsvUrl = (query = '', app = appId) => `/api/platform/application/${app}/log.csv${query}`;
const get = (url: string, token: string | null = owner.token) => t.app.inject({ method: 'GET', url, headers: token ? bearer(token) : {} });

/** RFC 4180: records end with CRLF; a quoted field may hold commas, CR, LF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else throw new Error(`expected a comma or CRLF at ${i}, found ${JSON.stringify(text[i])}`);
  }
  if (record.length) throw new Error('the last record has no CRLF');
  return records;
}

/** The export as objects keyed by the header row. */
function rowsOf(text: string): Record<string, string>[] {
  const [header, ...records] = parseCsv(text);
  for (const r of records) expect(r).toHaveLength(header!.length);
  return records.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

const base = Date.UTC(2026, 2, 1, 9, 0, 0);
const at = (minutes: number) => new Date(base + minutes * 60_000);

describe('a lock export', () => {
  let lockId: string;
  const codeId = crypto.randomUUID();
  const actorId = crypto.randomUUID();
  beforeAll(async () => {
    lockId = await insertLock(appId, 'Front Door');
    await t.app.db.insert(lockActivity).values([
      {
        lockId,
        applicationId: appId,
        at: at(0),
        type: 'ACCESS_CODE',
        method: 'access_code',
        accessCodeId: codeId,
        source: 'device',
        offline: true,
        actorUserId: actorId,
        actorEmail: 'ada@example.com',
        actorDisplayName: 'Ada Lovelace',
        subject: 'Cleaner',
      },
      { lockId, applicationId: appId, at: at(1), type: 'UNLOCK', rejected: true, reason: 'Outside the time window', repeats: 3, method: 'mobile_key' },
      { lockId, applicationId: appId, at: at(2), type: 'BATTERY', source: 'device', value: 17 },
    ]);
  });

  it('answers CSV as an attachment named after the lock and the days, with a header row and one record per entry', async () => {
    const res = await get(lockCsvUrl(lockId, `?start=${base / 1000}&end=${base / 1000 + 86_400 * 2}`));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="front-door-activity-2026-03-01-to-2026-03-03.csv"');
    expect(res.body.startsWith(`${LOCK_ACTIVITY_EXPORT_COLUMNS.join(',')}\r\n`)).toBe(true);
    expect(parseCsv(res.body)[0]).not.toContain('lock_name');
    expect(rowsOf(res.body)).toEqual([
      {
        time: '2026-03-01T09:00:00.000000Z',
        lock_id: lockId,
        type: 'ACCESS_CODE',
        result: 'accepted',
        reason: '',
        method: 'access_code',
        source: 'device',
        offline: 'true',
        actor_user_id: actorId,
        actor_email: 'ada@example.com',
        actor_name: 'Ada Lovelace',
        subject: 'Cleaner',
        access_code_id: codeId,
        value: '',
        repeats: '1',
      },
      {
        time: '2026-03-01T09:01:00.000000Z',
        lock_id: lockId,
        type: 'UNLOCK',
        result: 'refused',
        reason: 'Outside the time window',
        method: 'mobile_key',
        source: 'platform',
        offline: 'false',
        actor_user_id: '',
        actor_email: '',
        actor_name: '',
        subject: '',
        access_code_id: '',
        value: '',
        repeats: '3',
      },
      expect.objectContaining({ time: '2026-03-01T09:02:00.000000Z', type: 'BATTERY', source: 'device', value: '17', result: 'accepted' }),
    ]);
  });

  it('names the file without a start "until" the end day, and the end day is today without an end', async () => {
    const res = await get(lockCsvUrl(lockId));
    const today = new Date().toISOString().slice(0, 10);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="front-door-activity-until-${today}.csv"`);
    expect(rowsOf(res.body)).toHaveLength(3);
    expect(exportFileName('Haustür ß/Süd', 'lock', { start: 0, end: 86_400 })).toBe('haustur-ss-sud-activity-1970-01-01-to-1970-01-02.csv');
    expect(exportFileName('門', 'lock', { end: 0 })).toBe('lock-activity-until-1970-01-01.csv');
  });

  it('keeps inclusive start and end bounds (epoch seconds)', async () => {
    const s = (minutes: number) => (base + minutes * 60_000) / 1000;
    const types = async (query: string) => rowsOf((await get(lockCsvUrl(lockId, query))).body).map((r) => r.type);
    expect(await types(`?start=${s(1)}`)).toEqual(['UNLOCK', 'BATTERY']);
    expect(await types(`?end=${s(1)}`)).toEqual(['ACCESS_CODE', 'UNLOCK']);
    expect(await types(`?start=${s(1)}&end=${s(1)}`)).toEqual(['UNLOCK']);
    expect(await types(`?start=${s(0.5)}&end=${s(0.9)}`)).toEqual([]);
    // An empty range is the header alone.
    expect((await get(lockCsvUrl(lockId, `?start=${s(3)}`))).body).toBe(`${LOCK_ACTIVITY_EXPORT_COLUMNS.join(',')}\r\n`);
  });
});

describe('quoting and the formula guard', () => {
  let lockId: string;
  beforeAll(async () => {
    lockId = await insertLock(appId, 'Quoted Door');
  });

  it('quotes fields holding commas, quotes and line breaks (RFC 4180), and they read back unchanged', async () => {
    const subject = 'Smith, "Jo"\nflat 2\r\nback door';
    await t.app.db.insert(lockActivity).values({ lockId, applicationId: appId, at: at(10), type: 'SHARE', subject, actorDisplayName: 'O"Neil', reason: 'a,b' });
    const res = await get(lockCsvUrl(lockId));
    expect(res.body).toContain('"Smith, ""Jo""\nflat 2\r\nback door"');
    expect(res.body).toContain(',"O""Neil",');
    expect(res.body).toContain(',"a,b",');
    const [row] = rowsOf(res.body);
    expect(row).toMatchObject({ subject, actor_name: 'O"Neil', reason: 'a,b' });
  });

  it('puts an apostrophe before a cell a spreadsheet would run as a formula, and leaves other cells alone', async () => {
    const starts = ['=HYPERLINK("http://evil.example","x")', '+41 55', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd'];
    const guardLock = await insertLock(appId, 'Guarded Door');
    await t.app.db.insert(lockActivity).values(
      starts.map((text, i) => ({ lockId: guardLock, applicationId: appId, at: at(20 + i), type: 'SHARE' as const, subject: text, actorDisplayName: text, actorEmail: text, reason: text })),
    );
    await t.app.db.insert(lockActivity).values({ lockId: guardLock, applicationId: appId, at: at(29), type: 'BATTERY', subject: '=1,"2"', value: -3 });
    await t.app.db.insert(lockActivity).values({ lockId: guardLock, applicationId: appId, at: at(30), type: 'SHARE', subject: 'a=b', reason: ' =not a formula' });
    const res = await get(lockCsvUrl(guardLock));
    // Guarded and quoted at once: the apostrophe goes inside the quotes.
    expect(res.body).toContain(`,"'=1,""2""",,'-3,1\r\n`);
    const rows = rowsOf(res.body);
    expect(rows.slice(0, starts.length).map((r) => [r.subject, r.actor_name, r.actor_email, r.reason])).toEqual(starts.map((s) => [`'${s}`, `'${s}`, `'${s}`, `'${s}`]));
    expect(rows.at(-2)).toMatchObject({ subject: `'=1,"2"`, value: "'-3" });
    expect(rows.at(-1)).toMatchObject({ subject: 'a=b', reason: ' =not a formula' });
  });
});

describe('order and batches', () => {
  it('lists entries oldest first, entries at the same instant in the order they were logged', async () => {
    const lockId = await insertLock(appId, 'Tied Door');
    for (const subject of ['first', 'second', 'third']) await t.app.db.insert(lockActivity).values({ lockId, applicationId: appId, at: at(40), type: 'LOCK', subject });
    await t.app.db.insert(lockActivity).values({ lockId, applicationId: appId, at: at(39), type: 'LOCK', subject: 'earlier' });
    expect(rowsOf((await get(lockCsvUrl(lockId))).body).map((r) => r.subject)).toEqual(['earlier', 'first', 'second', 'third']);
  });

  it('delivers a log of more than two batches whole and in order, batch edges inside runs of equal times a microsecond apart', async () => {
    const lockId = await insertLock(appId, 'Busy Door');
    const total = 12_000;
    expect(total).toBeGreaterThan(2 * ACTIVITY_EXPORT_BATCH);
    // Three entries per instant, the instants one microsecond apart: a cursor that lost the microseconds,
    // or did not break ties by seq, would skip or repeat entries at a batch's edge.
    await t.app.db.execute(sql`alter table lock_activity disable trigger lock_activity_notify_insert`);
    try {
      await t.app.db.execute(sql`
        insert into lock_activity (lock_id, application_id, at, type, subject)
        select ${lockId}::uuid, ${appId}::uuid, ${at(60).toISOString()}::timestamptz + (i / 3) * interval '1 microsecond', 'UNLOCK', 'n' || i
        from generate_series(0, ${total - 1}::int) as i`);
    } finally {
      await t.app.db.execute(sql`alter table lock_activity enable trigger lock_activity_notify_insert`);
    }
    const res = await get(lockCsvUrl(lockId));
    expect(res.statusCode).toBe(200);
    const rows = rowsOf(res.body);
    expect(rows).toHaveLength(total);
    expect(rows.map((r) => r.subject)).toEqual(Array.from({ length: total }, (_, i) => `n${i}`));
    expect(rows[4_999]!.time).toBe('2026-03-01T10:00:00.001666Z');
  });

  it('answers a HEAD with the headers alone, reading no entry', async () => {
    const lockId = await insertLock(appId, 'Head Door');
    await t.app.db.insert(lockActivity).values({ lockId, applicationId: appId, at: at(50), type: 'LOCK' });
    const reads = vi.spyOn(t.app.db, 'execute');
    try {
      const res = await t.app.inject({ method: 'HEAD', url: lockCsvUrl(lockId), headers: bearer(owner.token) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="head-door-activity-until-/);
      expect(res.body).toBe('');
      await new Promise((r) => setTimeout(r, 0));
      const dialect = new PgDialect();
      const exportReads = reads.mock.calls.filter(([query]) => dialect.sqlToQuery(query as SQL).sql.includes('lock_activity'));
      expect(exportReads).toEqual([]);
    } finally {
      reads.mockRestore();
    }
  });

  it('lets the event loop turn before each batch, so the instance serves other requests meanwhile', async () => {
    const lockId = await insertLock(appId, 'Turning Door');
    await t.app.db.insert(lockActivity).values(Array.from({ length: 4 }, (_, i) => ({ lockId, applicationId: appId, at: at(90 + i), type: 'LOCK' as const })));
    const reader = activityCsv(t.app.db, { lockId }, {}, 2);
    await reader.next();
    for (let batch = 0; batch < 2; batch++) {
      let turned = false;
      setImmediate(() => (turned = true));
      expect((await reader.next()).done).toBe(false);
      expect(turned).toBe(true);
    }
    await reader.return(undefined);
  });

  it('stops reading while nobody takes what it has read, and for good once the stream is destroyed', async () => {
    const lockId = await insertLock(appId, 'Slow Reader Door');
    // 3,000 records of about 300 bytes: 30 batches of 100, about 30 KB each.
    await t.app.db.execute(sql`alter table lock_activity disable trigger lock_activity_notify_insert`);
    try {
      await t.app.db.execute(sql`
        insert into lock_activity (lock_id, application_id, at, type, subject)
        select ${lockId}::uuid, ${appId}::uuid, ${at(100).toISOString()}::timestamptz + i * interval '1 second', 'UNLOCK', repeat('x', 150) || i
        from generate_series(1, 3000) as i`);
    } finally {
      await t.app.db.execute(sql`alter table lock_activity enable trigger lock_activity_notify_insert`);
    }
    const dialect = new PgDialect();
    const spy = vi.spyOn(t.app.db, 'execute');
    const batchesRead = () => spy.mock.calls.filter(([query]) => JSON.stringify(dialect.sqlToQuery(query as SQL).params).includes(lockId)).length;
    try {
      const stream = activityCsvStream(t.app.db, { lockId }, {}, 100);
      stream.read(0);
      expect(await eventually(() => stream.readableLength >= READ_AHEAD_BYTES)).toBe(true);
      for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
      const whileFull = batchesRead();
      // The read-ahead and one batch past it, not the 30.
      expect(whileFull).toBeGreaterThan(0);
      expect(whileFull).toBeLessThanOrEqual(Math.ceil(READ_AHEAD_BYTES / 30_000) + 1);
      stream.destroy();
      await once(stream, 'close');
      const atClose = batchesRead();
      for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
      expect(batchesRead()).toBe(atClose);
      expect(atClose).toBeLessThanOrEqual(whileFull + 1);
    } finally {
      spy.mockRestore();
    }
  });

  it('reads each batch only when the reader asks for it', async () => {
    const lockId = await insertLock(appId, 'Lazy Door');
    await t.app.db.insert(lockActivity).values(Array.from({ length: 5 }, (_, i) => ({ lockId, applicationId: appId, at: at(70 + i), type: 'LOCK' as const, subject: `e${i}` })));
    const reader = activityCsv(t.app.db, { lockId }, {}, 2);
    const chunks: string[] = [];
    chunks.push((await reader.next()).value as string, (await reader.next()).value as string);
    // Logged after the first batch was read, later than every entry: the next batches still find it.
    await t.app.db.insert(lockActivity).values({ lockId, applicationId: appId, at: at(80), type: 'LOCK', subject: 'late' });
    for await (const chunk of reader) chunks.push(chunk);
    // The header, then batches of two: e0 e1 · e2 e3 · e4 late.
    expect(chunks).toHaveLength(4);
    expect(rowsOf(chunks.join('')).map((r) => r.subject)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'late']);
  });
});

describe('an application export', () => {
  it('holds every lock of the application, with the lock name, interleaved by time, and nothing of another application', async () => {
    const exportApp = await createApplication(t, owner.userId, 'Two Doors Ltd');
    const front = await insertLock(exportApp, 'Front');
    const back = await insertLock(exportApp, '=Back');
    const foreign = await insertLock(otherAppId, 'Foreign');
    await t.app.db.insert(lockActivity).values([
      { lockId: front, applicationId: exportApp, at: at(0), type: 'UNLOCK', subject: 'f0' },
      { lockId: back, applicationId: exportApp, at: at(1), type: 'LOCK', subject: 'b1' },
      { lockId: front, applicationId: exportApp, at: at(2), type: 'UNLOCK', subject: 'f2' },
      { lockId: foreign, applicationId: otherAppId, at: at(1), type: 'UNLOCK', subject: 'x' },
      { lockId: back, applicationId: exportApp, at: at(3), type: 'LOCK', subject: 'b3' },
    ]);
    const res = await get(appCsvUrl(`?end=${(base + 2 * 60_000) / 1000}`, exportApp));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="two-doors-ltd-activity-until-2026-03-01.csv"');
    expect(parseCsv(res.body)[0]).toEqual([...ACTIVITY_EXPORT_COLUMNS]);
    expect(rowsOf(res.body).map((r) => [r.subject, r.lock_id, r.lock_name])).toEqual([
      ['f0', front, 'Front'],
      ['b1', back, "'=Back"],
      ['f2', front, 'Front'],
    ]);
  });

  it('names the file after the application', async () => {
    const res = await get(appCsvUrl('?start=0&end=86400'));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="acht-bank-hq-activity-1970-01-01-to-1970-01-02.csv"');
  });
});

describe('who may export, and bad input', () => {
  let lockId: string;
  let otherLockId: string;
  beforeAll(async () => {
    lockId = await insertLock(appId, 'Guarded Log');
    otherLockId = await insertLock(otherAppId, 'Foreign Log');
  });

  it('needs a signed-in caller', async () => {
    for (const url of [lockCsvUrl(lockId), appCsvUrl()]) {
      const res = await get(url, null);
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('is 404 for a lock of another application, an unknown lock and a malformed id', async () => {
    for (const id of [otherLockId, crypto.randomUUID(), 'not-a-uuid']) {
      const res = await get(lockCsvUrl(id));
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, message: lockErrors.lockNotFound });
    }
  });

  it('is 404 for a stranger, whatever the query', async () => {
    for (const url of [lockCsvUrl(lockId), appCsvUrl(), appCsvUrl('?start=bad'), lockCsvUrl(lockId, '?end=-1')]) {
      const res = await get(url, stranger.token);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, message: apiErrors.applicationNotFound });
    }
  });

  it.each([
    ['?start=yesterday', lockMessages.timeBoundNumber],
    ['?end=-5', lockMessages.timeBoundNumber],
    ['?start=1e308', lockMessages.timeBoundNumber],
    ['?start=200&end=100', lockMessages.endBeforeStart],
  ])('%s → 400 with a clear message', async (query, message) => {
    for (const url of [lockCsvUrl(lockId, query), appCsvUrl(query)]) {
      const res = await get(url);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, message });
    }
  });

  it('is in the OpenAPI document as a text/csv answer', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/docs/json' })).json() as { paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }> };
    for (const path of ['/api/platform/application/{applicationId}/lock/{lockId}/log.csv', '/api/platform/application/{applicationId}/log.csv']) {
      expect(Object.keys(doc.paths[path]?.get?.responses['200']?.content ?? {})).toEqual(['text/csv']);
    }
  });
});
