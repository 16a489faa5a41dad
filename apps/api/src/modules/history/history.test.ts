import { generateKeyPairSync } from 'node:crypto';
import { desc, eq, getTableColumns, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveLogoUrl, historyErrors, REDACTED, type HistoryEntry, type HistoryPage } from '@latchkey/contract';
import { createTestApp, eventually, testDbKind, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { makePng } from '../../../test/fixtures/images.js';
import { createOwner } from '../../../test/fixtures/platform-users.js';
import { applicationChanges, applications } from '../../db/schema.js';
import { historyFields, updateWithHistory } from '../applications/applications.service.js';
import { recordChange } from './history.service.js';

/**
 * Every change to an application leaves a history entry with its actor and the before and
 * after of what changed. The route table is enumerated, so a new mutating route without a case here
 * (or a stated reason not to have one) fails this file.
 */
let t: TestApp;
let owner: { userId: string; email: string; token: string };
let second: { userId: string; email: string; token: string };
let stranger: { userId: string; email: string; token: string };
let appId: string;
let lockId: string;
let appUserId: string;

let extraLock = '';
let webhookId = '';
let tileId = '';
let siteId = '';
/** A public address literally (no DNS in tests); nothing is delivered to it here. */
const HOOK = 'https://93.184.215.14/hooks';
const publicJwk = () => ({ ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: `k-${Math.random().toString(36).slice(2, 8)}`, use: 'sig' });
const keyToAdd = publicJwk();
const as = (who: { token: string }) => ({ authorization: `Bearer ${who.token}` });
const base = () => `/api/platform/application/${appId}`;

async function call(method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, who = owner) {
  const res = await t.app.inject({ method, url, headers: as(who), ...(payload === undefined ? {} : { payload: payload as object }) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res;
}

async function history(query = '', who = owner, id = appId): Promise<HistoryPage> {
  const res = await t.app.inject({ url: `/api/platform/application/${id}/history${query}`, headers: as(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}


beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  second = await createOwner(t);
  stranger = await createOwner(t);
  const created = await call('POST', '/api/platform/application', { name: 'History App', companyName: 'Hist Co', mailingAddress: '1 Road' });
  appId = created.headers.location!.toString().split('/').pop()!;
  const locks = await t.app.inject({ url: `${base()}/lock`, headers: as(owner) });
  lockId = (locks.json() as { id: string }[])[0]!.id;
});
afterAll(() => t?.close());

/**
 * One case per mutating route: how to call it (as the owner, on the application above) and the entry it
 * must leave. Cases run in order; a later one may rely on what an earlier one made.
 */
type Case = { run: () => Promise<unknown>; kind: HistoryEntry['kind']; field: string; before?: unknown; after?: unknown };
const cases = (): Record<string, Case[]> => ({
  'POST /api/platform/application': [
    { run: () => call('POST', '/api/platform/application', { name: 'Second App', companyName: 'Co', mailingAddress: '2 Road' }), kind: 'details', field: 'name', before: null, after: 'Second App' },
  ],
  'POST /api/platform/application/:applicationId': [
    { run: () => call('POST', base(), { name: 'Renamed' }), kind: 'details', field: 'name', before: 'History App', after: 'Renamed' },
    { run: () => call('POST', base(), { privacyPolicy: 'https://example.com/privacy' }), kind: 'urls', field: 'privacyPolicy', before: null, after: 'https://example.com/privacy' },
    { run: () => call('POST', base(), { emailPreferences: { primaryColour: '#112233' } }), kind: 'branding', field: 'emailPreferences.primaryColour', before: '#00283C', after: '#112233' },
    {
      run: async () => {
        const { uploadUrl } = (await call('POST', `${base()}/logo`, { contentType: 'image/png' })).json() as { uploadUrl: string };
        const u = new URL(uploadUrl);
        await t.app.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'image/png' }, payload: makePng(10, 10) });
        await call('POST', base(), { logoUrl: deriveLogoUrl(uploadUrl, { uploadBaseUrl: 'http://localhost:3000/api/uploads', cdnBaseUrl: 'http://localhost:3000/cdn' }) });
      },
      kind: 'logo',
      field: 'logoUrl',
      before: null,
    },
  ],
  'POST /api/platform/application/:applicationId/owner': [
    { run: () => call('POST', `${base()}/owner`, { userId: second.userId }), kind: 'owner', field: 'owners', before: null, after: second.email },
  ],
  'DELETE /api/platform/application/:applicationId/owner': [
    { run: () => call('DELETE', `${base()}/owner`, { userId: second.userId }), kind: 'owner', field: 'owners', before: second.email, after: null },
  ],
  'POST /api/platform/application/:applicationId/auth/key': [{ run: () => call('POST', `${base()}/auth/key`, keyToAdd), kind: 'key', field: 'authKeys', before: null }],
  'DELETE /api/platform/application/:applicationId/auth/key': [{ run: () => call('DELETE', `${base()}/auth/key`, { kid: keyToAdd.kid }), kind: 'key', field: 'authKeys', after: null }],
  'POST /api/platform/application/:applicationId/auth/issuer': [
    { run: () => call('POST', `${base()}/auth/issuer`, { url: 'https://issuer.example.com' }), kind: 'issuer', field: 'authDomains', before: null, after: 'https://issuer.example.com' },
  ],
  'DELETE /api/platform/application/:applicationId/auth/issuer': [
    { run: () => call('DELETE', `${base()}/auth/issuer`, { url: 'https://issuer.example.com' }), kind: 'issuer', field: 'authDomains', before: 'https://issuer.example.com', after: null },
  ],
  'POST /api/platform/application/:applicationId/cors': [
    { run: () => call('POST', `${base()}/cors`, { url: 'https://app.example.com' }), kind: 'cors', field: 'corsDomains', before: null, after: 'https://app.example.com' },
  ],
  'DELETE /api/platform/application/:applicationId/cors': [
    { run: () => call('DELETE', `${base()}/cors`, { url: 'https://app.example.com' }), kind: 'cors', field: 'corsDomains', before: 'https://app.example.com', after: null },
  ],
  'POST /api/platform/application/:applicationId/user': [
    {
      run: async () => (appUserId = ((await call('POST', `${base()}/user`, { email: 'member@example.com' })).json() as { userId: string }).userId),
      kind: 'user',
      field: 'users',
      before: null,
      after: 'member@example.com',
    },
  ],
  'POST /api/platform/application/:applicationId/lock': [
    { run: async () => (extraLock = ((await call('POST', `${base()}/lock`, { name: 'Garage' })).json() as { id: string }).id), kind: 'lock', field: 'name', before: null, after: 'Garage' },
  ],
  'PUT /api/platform/application/:applicationId/lock/:lockId': [
    { run: () => call('PUT', `${base()}/lock/${lockId}`, { name: 'Main Door' }), kind: 'lock', field: 'name', before: 'Front Door', after: 'Main Door' },
    { run: () => call('PUT', `${base()}/lock/${lockId}`, { settings: { unlockTime: 9 } }), kind: 'lock_settings', field: 'settings.unlockTime', before: 5, after: 9 },
  ],
  'POST /api/platform/application/:applicationId/lock/:lockId/user': [
    { run: () => call('POST', `${base()}/lock/${lockId}/user`, { userId: appUserId, role: 'ADMIN' }), kind: 'share', field: 'role', before: null, after: 'ADMIN' },
  ],
  'DELETE /api/platform/application/:applicationId/lock/:lockId/user/:userId': [
    { run: () => call('DELETE', `${base()}/lock/${lockId}/user/${appUserId}`), kind: 'share', field: 'role', before: 'ADMIN', after: null },
  ],
  'POST /api/platform/application/:applicationId/lock/:lockId/device': [{ run: () => call('POST', `${base()}/lock/${lockId}/device`), kind: 'lock', field: 'device', before: null }],
  'DELETE /api/platform/application/:applicationId/lock/:lockId/device': [{ run: () => call('DELETE', `${base()}/lock/${lockId}/device`), kind: 'lock', field: 'device', after: null }],
  'DELETE /api/platform/application/:applicationId/lock/:lockId': [{ run: () => call('DELETE', `${base()}/lock/${extraLock}`), kind: 'lock', field: 'name', before: 'Garage', after: null }],
  'POST /api/platform/application/:applicationId/lock/:lockId/tile': [
    {
      run: async () => (tileId = ((await call('POST', `${base()}/lock/${lockId}/tile`)).json() as { tileId: string }).tileId),
      kind: 'tile',
      field: 'locks',
      before: null,
      after: ['Main Door'],
    },
  ],
  'PUT /api/platform/application/:applicationId/lock/:lockId/tile/:tileId': [
    { run: () => call('PUT', `${base()}/lock/${lockId}/tile/${tileId}`, { name: 'Gate sticker' }), kind: 'tile', field: 'name', before: null, after: 'Gate sticker' },
  ],
  'DELETE /api/platform/application/:applicationId/lock/:lockId/tile/:tileId': [
    { run: () => call('DELETE', `${base()}/lock/${lockId}/tile/${tileId}`), kind: 'tile', field: 'locks', before: ['Main Door'], after: null },
  ],
  'POST /api/platform/application/:applicationId/site': [
    { run: async () => (siteId = ((await call('POST', `${base()}/site`, { name: 'North Wing' })).json() as { id: string }).id), kind: 'site', field: 'name', before: null, after: 'North Wing' },
  ],
  'PUT /api/platform/application/:applicationId/site/:siteId': [
    { run: () => call('PUT', `${base()}/site/${siteId}`, { name: 'East Wing' }), kind: 'site', field: 'name', before: 'North Wing', after: 'East Wing' },
  ],
  'PUT /api/platform/application/:applicationId/lock/:lockId/site': [
    { run: () => call('PUT', `${base()}/lock/${lockId}/site`, { siteId }), kind: 'site', field: 'site', before: null, after: 'East Wing' },
  ],
  'DELETE /api/platform/application/:applicationId/site/:siteId': [
    { run: () => call('DELETE', `${base()}/site/${siteId}`), kind: 'site', field: 'locks', before: ['Main Door'], after: null },
  ],
  'POST /api/platform/application/:applicationId/webhook': [
    {
      run: async () => (webhookId = ((await call('POST', `${base()}/webhook`, { url: HOOK, events: ['share.added'] })).json() as { id: string }).id),
      kind: 'webhook',
      field: 'secret',
      before: null,
      after: REDACTED,
    },
  ],
  'POST /api/platform/application/:applicationId/webhook/:webhookId/rotate': [
    { run: () => call('POST', `${base()}/webhook/${webhookId}/rotate`), kind: 'webhook', field: 'secret', before: REDACTED, after: REDACTED },
  ],
  'DELETE /api/platform/application/:applicationId/webhook/:webhookId': [
    { run: () => call('DELETE', `${base()}/webhook/${webhookId}`), kind: 'webhook', field: 'url', before: HOOK, after: null },
  ],
  'DELETE /api/platform/application/:applicationId/user': [
    { run: () => call('DELETE', `${base()}/user`, { userId: appUserId }), kind: 'user', field: 'users', before: 'member@example.com', after: null },
  ],
});

/** Mutating routes that change nothing the history records, and why. */
const exempt: Record<string, string> = {
  'DELETE /api/platform/application/:applicationId': 'the history is deleted with the application',
  'POST /api/platform/application/:applicationId/logo': 'hands out an upload URL; the logo changes when logoUrl is saved (case "logo")',
  'POST /api/platform/application/directory/query': 'a directory look-up, changes nothing',
  'POST /api/platform/application/:applicationId/auth/token-check': 'tests a token, changes nothing',
  'POST /api/platform/application/:applicationId/email/test': 'sends a test email to the owner (kept in the Outbox), changes nothing',
  'POST /api/platform/application/:applicationId/webhook/:webhookId/delivery/:deliveryId/resend': 'delivers an event again; changes no setting',
  'POST /api/platform/application/:applicationId/webhook/:webhookId/test': 'sends a test delivery; changes no setting',
  'POST /api/platform/application/:applicationId/lock/:lockId/access-code': "a credential, not a setting: the lock's activity log records who made which code (ACCESS_CODE)",
  'DELETE /api/platform/application/:applicationId/lock/:lockId/access-code/:accessCodeId':
    "a credential, not a setting: the lock's activity log records who withdrew which code (ACCESS_CODE)",
  'POST /api/platform/application/:applicationId/lock/:lockId/simulate/keypad': "what a door would do; the lock's activity log records it",
  'POST /api/platform/application/:applicationId/lock/:lockId/simulate/:kind': "what a door would report; the lock's activity log records it",
};

describe('change history', () => {
  it('every mutating route under /platform/application has a case or a stated exemption', () => {
    const mutating = t.app.routeTable
      .filter((r) => r.url.startsWith('/api/platform/application') && !['GET', 'HEAD', 'OPTIONS'].includes(r.method))
      .map((r) => `${r.method} ${r.url}`);
    expect(mutating.length).toBeGreaterThan(15);
    const known = cases();
    const missing = mutating.filter((route) => !known[route] && !exempt[route]);
    expect(missing, 'mutating routes with no history case').toEqual([]);
  });

  it('each mutating route leaves an entry with the actor and the before and after', async () => {
    const creation = (await history()).items.at(-1)!;
    expect(creation).toMatchObject({ kind: 'details', actor: { userId: owner.userId, email: owner.email } });
    expect(creation.changes).toContainEqual({ field: 'name', before: null, after: 'History App' });

    for (const [route, steps] of Object.entries(cases())) {
      for (const step of steps) {
        const seen = (await history()).items.length;
        await step.run();
        if (route === 'POST /api/platform/application') {
          // A new application: its first entry is in its own history.
          const mine = await t.app.inject({ url: '/api/platform/application', headers: as(owner) });
          const created = (mine.json() as { applicationId: string; name: string }[]).find((a) => a.name === 'Second App')!;
          const [entry] = (await history('', owner, created.applicationId)).items;
          expect(entry!.changes).toContainEqual({ field: step.field, before: step.before, after: step.after });
          continue;
        }
        const page = await history();
        expect(page.items.length, route).toBeGreaterThan(seen);
        const entry = page.items[0]!;
        expect(entry.kind, route).toBe(step.kind);
        expect(entry.actor, route).toEqual({ userId: owner.userId, email: owner.email });
        const change = entry.changes.find((c) => c.field === step.field);
        expect(change, `${route}: ${JSON.stringify(entry.changes)}`).toBeDefined();
        if ('before' in step) expect(change!.before, route).toEqual(step.before);
        if ('after' in step) expect(change!.after, route).toEqual(step.after);
        expect(Math.abs(entry.at - Date.now() / 1000)).toBeLessThan(60);
      }
    }
  });

  it('an update that changes nothing records nothing; one across kinds records one entry per kind', async () => {
    const before = (await history()).items.length;
    await call('POST', base(), { name: 'Renamed' });
    expect((await history()).items.length).toBe(before);
    await call('POST', base(), { companyName: 'New Co', appLink: 'https://example.com/app' });
    const [a, b] = (await history()).items;
    expect([a!.kind, b!.kind].sort()).toEqual(['details', 'urls']);
  });

  it('keys are summarised, never stored whole; secrets are redacted whatever the caller passes', async () => {
    const keys = (await history('?kind=key')).items;
    const added = keys.find((e) => e.changes[0]!.before === null)!;
    expect(added.changes[0]!.after).toEqual({ kid: keyToAdd.kid, kty: 'OKP', crv: 'Ed25519', use: 'sig' });
    expect(JSON.stringify(keys)).not.toContain(keyToAdd.x);

    await t.database.db.transaction(async (tx) =>
      recordChange(tx, { applicationId: appId, actor: { id: owner.userId, email: owner.email }, kind: 'webhook', subject: 'https://hooks.example.com', changes: [
        { field: 'secret', before: 'whsec_old', after: 'whsec_new' },
        { field: 'url', before: null, after: 'https://hooks.example.com' },
      ] }),
    );
    const [entry] = (await history('?kind=webhook')).items;
    expect(entry!.changes).toEqual([
      { field: 'secret', before: REDACTED, after: REDACTED },
      { field: 'url', before: null, after: 'https://hooks.example.com' },
    ]);
    const stored = await t.database.db.execute(`select changes::text as c from application_changes where kind = 'webhook'` as never);
    expect(JSON.stringify(stored)).not.toContain('whsec_');
  });

  it('filters by kind and by actor (user id or email), pages newest first without gaps or repeats', async () => {
    await call('POST', `${base()}/owner`, { userId: second.userId });
    await call('POST', base(), { supportContact: 'mailto:help@example.com' }, second);
    const bySecond = (await history(`?actor=${second.userId}`)).items;
    expect(bySecond.map((e) => e.kind)).toEqual(['urls']);
    expect((await history(`?actor=${encodeURIComponent(second.email.toUpperCase())}`)).items).toEqual(bySecond);
    expect((await history('?kind=cors')).items.every((e) => e.kind === 'cors')).toBe(true);
    expect((await history('?kind=cors')).items).toHaveLength(2);

    const all = (await history('?pageSize=200')).items;
    expect(all.length).toBeGreaterThan(20);
    const ats = all.map((e) => e.at);
    expect([...ats].sort((x, y) => y - x)).toEqual(ats);
    const paged: HistoryEntry[] = [];
    let cursor: string | null = null;
    do {
      const page: HistoryPage = await history(`?pageSize=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(7);
      paged.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  it('owners only: a stranger gets 404, a removed owner too; bad filters are 400', async () => {
    const res = await t.app.inject({ url: `${base()}/history`, headers: as(stranger) });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('Renamed');
    expect((await t.app.inject({ url: `${base()}/history` })).statusCode).toBe(401);
    const cursorOf = (time: string) => `?cursor=${Buffer.from(JSON.stringify([time, 1])).toString('base64url')}`;
    // The last two: the right shape, but no time PostgreSQL holds (was a 500).
    for (const query of ['?kind=nonsense', '?cursor=garbage', `?cursor=${Buffer.from('[1,2]').toString('base64url')}`, '?pageSize=0', cursorOf('9999-99-99T99:99:99.000000Z'), cursorOf('0000-00-00T00:00:00.000000Z')]) {
      const bad = await t.app.inject({ url: `${base()}/history${query}`, headers: as(owner) });
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json()).toMatchObject({ code: 400 });
    }
    const badCursor = await t.app.inject({ url: `${base()}/history?cursor=garbage`, headers: as(owner) });
    expect(badCursor.json().message).toBe(historyErrors.invalidCursor);
    expect((await t.app.inject({ url: `${base()}/history${cursorOf('9999-99-99T99:99:99.000000Z')}`, headers: as(owner) })).json().message).toBe(historyErrors.invalidCursor);
    const email = uniqueEmail('nobody');
    expect((await history(`?actor=${email}`)).items).toEqual([]);
  });

  it('a failed change leaves no entry (it is written in the change’s transaction)', async () => {
    const before = (await history()).items.length;
    const dup = await t.app.inject({ method: 'POST', url: `${base()}/cors`, headers: as(owner), payload: { url: 'https://dup.example.com' } });
    expect(dup.statusCode).toBe(204);
    const again = await t.app.inject({ method: 'POST', url: `${base()}/cors`, headers: as(owner), payload: { url: 'https://dup.example.com' } });
    expect(again.statusCode).toBe(409);
    await call('DELETE', `${base()}/owner`, { userId: second.userId });
    const last = await t.app.inject({ method: 'DELETE', url: `${base()}/owner`, headers: as(owner), payload: { userId: owner.userId } });
    expect(last.statusCode).toBe(409);
    expect((await history()).items.length).toBe(before + 2);
  });

  it('lists everyone in the history as actor choices, a removed owner too; owners only', async () => {
    // `second` changed the support contact as an owner and was removed as owner above.
    const owners = (await t.app.inject({ url: `${base()}/owner`, headers: as(owner) })).json() as { userId: string }[];
    expect(owners.map((o) => o.userId)).not.toContain(second.userId);
    await t.database.db.transaction(async (tx) =>
      recordChange(tx, { applicationId: appId, actor: { id: null, email: null }, kind: 'details', changes: [{ field: 'name', before: 'x', after: 'y' }] }),
    );
    const res = await t.app.inject({ url: `${base()}/history/actors`, headers: as(owner) });
    expect(res.statusCode, res.body).toBe(200);
    // Most recent first, one entry per user, the platform's own entry (no id, no email) left out.
    expect(res.json()).toEqual([
      { userId: owner.userId, email: owner.email },
      { userId: second.userId, email: second.email },
    ]);
    const bySecond = (await history(`?actor=${second.userId}`)).items;
    expect(bySecond.map((e) => e.kind)).toEqual(['urls']);

    expect((await t.app.inject({ url: `${base()}/history/actors`, headers: as(stranger) })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `${base()}/history/actors`, headers: as(second) })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `${base()}/history/actors` })).statusCode).toBe(401);
  });

  it('concurrent updates of one field form one chain: each entry’s before is the after of the one before it', async () => {
    await call('POST', base(), { name: 'Chain 0' });
    const names = Array.from({ length: 12 }, (_, i) => `Chain ${i + 1}`);
    const statuses = await Promise.all(names.map((name) => t.app.inject({ method: 'POST', url: base(), headers: as(owner), payload: { name } }).then((r) => r.statusCode)));
    expect(statuses.every((s) => s === 204)).toBe(true);
    const renames = (await history('?kind=details&pageSize=200')).items
      .map((e) => e.changes.find((c) => c.field === 'name'))
      .filter((c): c is NonNullable<typeof c> => !!c && String(c.after).startsWith('Chain '))
      .reverse();
    expect(renames).toHaveLength(13);
    // Entries are timed at their statement's start, not its commit, so the chain is followed by its links:
    // from Chain 0 each after is the before of exactly one entry, and the last after is the name now.
    const byBefore = new Map(renames.map((c) => [c.before, c]));
    expect(byBefore.size, 'two entries with the same before').toBe(13);
    let current = 'Chain 0';
    const seen = new Set([current]);
    for (let next = byBefore.get(current); next; next = byBefore.get(current)) {
      current = String(next.after);
      expect(seen.has(current), JSON.stringify(renames)).toBe(false);
      seen.add(current);
    }
    expect(seen.size).toBe(13);
    const app = (await t.app.inject({ url: base(), headers: as(owner) })).json() as { name: string };
    expect(app.name).toBe(current);
  });
});

describe('the history trigger (migration 0008) and historyFields agree', () => {
  /** Columns that are the row's bookkeeping, not a change anyone makes. */
  const BOOKKEEPING = new Set(['id', 'version', 'createdAt', 'updatedAt', 'changeActorId', 'changeActorEmail', 'updateSubscribers']);
  const rowOf = async (id: string) => (await t.app.db.select().from(applications).where(eq(applications.id, id)))[0]!;

  it('every column of an application is recorded under its field and kind, or is bookkeeping', async () => {
    for (const key of Object.keys(getTableColumns(applications))) {
      if (!BOOKKEEPING.has(key)) expect(historyFields[key], `column ${key} is neither in historyFields nor bookkeeping`).toBeDefined();
    }
    const created = await call('POST', '/api/platform/application', { name: 'Every Column', companyName: 'Co', mailingAddress: '3 Road' });
    const id = created.headers.location!.toString().split('/').pop()!;
    const valueFor: Record<string, unknown> = {
      onlySendEssentialEmails: false,
      callToAction: { actionTarget: 'https://example.com/open', headline: 'Open', actionText: 'Go' },
      primaryColour: '#123456',
      secondaryColour: '#654321',
    };
    for (const [key, [field, kind]] of Object.entries(historyFields)) {
      const before = (await rowOf(id) as Record<string, unknown>)[key] ?? null;
      const after = valueFor[key] ?? `new ${key}`;
      // Straight on the table, as any code of the future might: the trigger records it, not the route.
      expect(await updateWithHistory(t.app.db, id, { [key]: after }, { id: owner.userId, email: owner.email })).toBe(true);
      const [entry] = (await history(`?kind=${kind}&pageSize=1`, owner, id)).items;
      expect(entry?.changes, `${key} was not recorded as ${kind}/${field}`).toEqual([{ field, before, after }]);
      expect(entry?.actor).toEqual({ userId: owner.userId, email: owner.email });
    }
    // It answers whether the application exists (the rows the UPDATE touched, as each driver reports them).
    expect(await updateWithHistory(t.app.db, crypto.randomUUID(), { name: 'Nobody' }, { id: owner.userId, email: owner.email })).toBe(false);
  });

  it('an update that names no actor is the platform’s own; the actor is never left on the row', async () => {
    await call('POST', base(), { supportContact: 'mailto:help@example.com' });
    expect(await rowOf(appId)).toMatchObject({ changeActorId: null, changeActorEmail: null });
    await t.app.db.update(applications).set({ supportContact: 'mailto:desk@example.com' }).where(eq(applications.id, appId));
    const [entry] = (await history('?kind=urls&pageSize=1')).items;
    expect(entry).toMatchObject({ actor: { userId: null, email: null }, changes: [{ field: 'supportContact', before: 'mailto:help@example.com', after: 'mailto:desk@example.com' }] });
    // A change that only bumps the version (a key or an owner added) records nothing of the application's own.
    const count = (await history('?pageSize=200')).items.length;
    await t.app.db.update(applications).set({ version: sql`${applications.version} + 1` }).where(eq(applications.id, appId));
    expect((await history('?pageSize=200')).items.length).toBe(count);
  });
});

describe('the history without a foreign key (migration 0010)', () => {
  const entriesOf = async (id: string) =>
    ((await t.app.database.executeSql(`select count(*)::int as n from application_changes where application_id = $1`, [id])).rows[0] as { n: number });
  const subscribersOf = async (id: string) => (await t.app.db.select({ n: applications.updateSubscribers }).from(applications).where(eq(applications.id, id)))[0]!.n;
  const newApp = async (name: string) =>
    (await call('POST', '/api/platform/application', { name, companyName: 'Co', mailingAddress: '4 Road' })).headers.location!.toString().split('/').pop()!;

  it('removing an application removes its history with it (the purge trigger)', async () => {
    const id = await newApp('Short Lived');
    await call('POST', `/api/platform/application/${id}`, { name: 'Shorter Lived' });
    await call('POST', `/api/platform/application/${id}/cors`, { url: 'https://short.example.com' });
    expect((await entriesOf(id)).n).toBeGreaterThanOrEqual(2);
    await call('DELETE', `/api/platform/application/${id}`);
    expect((await entriesOf(id)).n).toBe(0);
  });

  // Two sessions interleaved: PostgreSQL only (PGlite has one connection), so skipped on PGlite.
  it.skipIf(testDbKind !== 'postgres')('removing an application while the relay holds its owed entries and waits for its webhook is no deadlock', async () => {
      const id = await newApp('Raced');
      const hook = (await call('POST', `/api/platform/application/${id}/webhook`, { url: `${HOOK}/raced`, events: ['application.updated'] })).json() as { id: string };
      await call('POST', `/api/platform/application/${id}`, { name: 'Raced Again' });
      const waiting = async () =>
        ((await t.app.database.executeSql(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'delete from "applications"%'`)).rows[0] as { n: number }).n > 0;
      let removal: Promise<unknown> | undefined;
      // What the relay does (delivery.ts): the entries first (for update), then the webhook (for key share).
      const relay = t.app.db.transaction(async (tx) => {
        await tx.execute(sql`select seq from application_changes where application_id = ${id} for update`);
        removal = t.app.db.delete(applications).where(eq(applications.id, id)).execute();
        removal.catch(() => {}); // settled below, whichever way it goes
        expect(await eventually(waiting, 5000)).toBe(true);
        await tx.execute(sql`select 1 from webhooks where id = ${hook.id} for key share`);
      });
      const [relayed, removed] = await Promise.allSettled([relay, relay.then(() => removal)]);
      expect(relayed).toMatchObject({ status: 'fulfilled' });
      expect(removed).toMatchObject({ status: 'fulfilled' });
      expect((await entriesOf(id)).n).toBe(0);
    });

  it('an entry for an application that is not there is a 404 and stores nothing', async () => {
    const missing = crypto.randomUUID();
    const change = { applicationId: missing, actor: { id: owner.userId, email: owner.email }, kind: 'cors' as const, subject: 'https://gone.example.com', changes: [{ field: 'url', before: null, after: 'https://gone.example.com' }] };
    await expect(recordChange(t.app.db, change)).rejects.toMatchObject({ statusCode: 404 });
    expect((await entriesOf(missing)).n).toBe(0);
  });

  it('update_subscribers counts the webhooks subscribed to application.updated, whatever is removed at once; a change owes the event only while it is above 0', async () => {
    const id = await newApp('Counted');
    const by = { id: owner.userId, email: owner.email };
    const cors = (url: string) => ({ applicationId: id, actor: by, kind: 'cors' as const, subject: url, changes: [{ field: 'url', before: null, after: url }] });
    // Whether the change made by `change` owes the event: read in its own transaction, before the relay can take it.
    const owes = (change: (tx: typeof t.app.db) => Promise<unknown>) =>
      t.app.db.transaction(async (tx) => {
        await change(tx);
        const [newest] = await tx
          .select({ owed: sql<boolean>`${applicationChanges.announce} is not null` })
          .from(applicationChanges)
          .where(eq(applicationChanges.applicationId, id))
          .orderBy(desc(applicationChanges.at), desc(applicationChanges.seq))
          .limit(1);
        return newest!.owed;
      });
    expect(await owes((tx) => updateWithHistory(tx, id, { name: 'Counted Before' }, by))).toBe(false);
    const hooks: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call('POST', `/api/platform/application/${id}/webhook`, { url: `${HOOK}/${i}`, events: i === 3 ? ['lock.unlocked'] : ['application.updated', 'share.added'] });
      hooks.push((res.json() as { id: string }).id);
    }
    expect(await subscribersOf(id)).toBe(3);
    expect(await owes((tx) => updateWithHistory(tx, id, { name: 'Counted Once' }, by))).toBe(true);
    expect(await owes((tx) => recordChange(tx, cors('https://one.example.com')))).toBe(true);
    // All four removed at the same time: each removal counts itself out, none is lost.
    await Promise.all(hooks.map((h) => call('DELETE', `/api/platform/application/${id}/webhook/${h}`)));
    expect(await subscribersOf(id)).toBe(0);
    expect(await owes((tx) => updateWithHistory(tx, id, { name: 'Counted Twice' }, by))).toBe(false);
    expect(await owes((tx) => recordChange(tx, cors('https://two.example.com')))).toBe(false);
  });
});
