import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { messages, tileErrors, type LockTile } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { applicationChanges, applications } from '../../db/schema.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/** A tile has a name its owners give it, so two stickers on one lock can be told apart. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let stranger: Awaited<ReturnType<typeof createOwner>>;
let appId: string;
let lockId: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  stranger = await createOwner(t);
  appId = await createApplication(t, owner.userId, 'Acme Access');
  lockId = ((await call('POST', `/api/platform/application/${appId}/lock`, { name: 'Front Door' })).json() as { id: string }).id;
});
afterAll(() => t?.close());

function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, token = owner.token) {
  return t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
}
const tilesUrl = () => `/api/platform/application/${appId}/lock/${lockId}/tile`;

describe('a tile’s name', () => {
  it('is null for a new tile; the owner names it, renames it and clears it, and the history says so', async () => {
    const made = (await call('POST', tilesUrl())).json() as LockTile;
    expect(made.name).toBeNull();
    const named = await call('PUT', `${tilesUrl()}/${made.tileId}`, { name: '  Sticker by the gate ' });
    expect(named.statusCode).toBe(200);
    expect(named.json()).toMatchObject({ tileId: made.tileId, name: 'Sticker by the gate', url: made.url });
    expect(((await call('GET', tilesUrl())).json() as LockTile[]).find((x) => x.tileId === made.tileId)?.name).toBe('Sticker by the gate');

    expect((await call('PUT', `${tilesUrl()}/${made.tileId}`, { name: null })).json()).toMatchObject({ name: null });
    const history = await t.app.db
      .select({ changes: applicationChanges.changes })
      .from(applicationChanges)
      .where(and(eq(applicationChanges.applicationId, appId), eq(applicationChanges.subject, made.tileId)));
    const renames = history.flatMap((h) => (h.changes as { field: string; before: unknown; after: unknown }[]).filter((c) => c.field === 'name'));
    expect(renames).toEqual(expect.arrayContaining([
      { field: 'name', before: null, after: 'Sticker by the gate' },
      { field: 'name', before: 'Sticker by the gate', after: null },
    ]));
  });

  it('refuses a blank, too long or missing name with 400 and the contract’s message', async () => {
    const made = (await call('POST', tilesUrl())).json() as LockTile;
    for (const [body, message] of [
      [{ name: '   ' }, messages.required],
      [{ name: 'x'.repeat(201) }, messages.tooLong],
      [{}, undefined],
    ] as const) {
      const res = await call('PUT', `${tilesUrl()}/${made.tileId}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      if (message) expect(res.json().message).toContain(message);
    }
  });

  it('is the owners’ alone: another account gets 404, a tile not on the lock is 404', async () => {
    const made = (await call('POST', tilesUrl())).json() as LockTile;
    expect((await call('PUT', `${tilesUrl()}/${made.tileId}`, { name: 'Mine' }, stranger.token)).statusCode).toBe(404);
    const missing = await call('PUT', `${tilesUrl()}/00000000-0000-4000-8000-000000000000`, { name: 'Ghost' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe(tileErrors.notLinked);
  });
});

describe('GET /tile/{tileId}/branding (public)', () => {
  it('answers the application’s name, logo and colour to anyone at the door, and nothing else of it', async () => {
    await t.app.db.update(applications).set({ logoUrl: 'https://cdn.example.com/acme.png', primaryColour: '#AA2200' }).where(eq(applications.id, appId));
    const made = (await call('POST', tilesUrl())).json() as LockTile;
    const res = await t.app.inject({ method: 'GET', url: `/api/tile/${made.tileId}/branding` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'Acme Access', logoUrl: 'https://cdn.example.com/acme.png', primaryColour: '#AA2200' });
  });

  it('answers an unknown or malformed tile with 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-tile']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/tile/${id}/branding` });
      expect(res.statusCode, id).toBe(404);
      expect(res.json().message).toBe(tileErrors.noDevices);
    }
  });
});
