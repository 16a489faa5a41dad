import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, count, eq } from 'drizzle-orm';
import { lockErrors, MAX_LOCKS_PER_TILE, siteErrors, tileErrors, type Lock, type LockTile, type TileLocks } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { applicationChanges, tileLocks, tiles } from '../../db/schema.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * Tiles: the calls of the platform's SDKs on a real database, with the bodies they send.
 * - headless SDK (doordeck/doordeck-headless-sdk): clients/TilesClient.kt; body model
 *   model/requests/TileRequests.kt (AssociateMultipleLocksRequest {siteId, devices}); response model
 *   model/responses/NetworkTileResponses.kt (NetworkTileLocksResponse {siteId, tileId, deviceIds}).
 * - archived JavaScript SDK (doordeck/doordeck-sdk-javascript): common/services/deviceOperation.js
 *   getLockFromTile (GET /tile/{id}), link (PUT /device/{id}/tile/{tileId}, body null), delink (DELETE).
 */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let frontDoor: string;
let garage: string;
let foreignLock: string;
let userToken: string;
let adminToken: string;
let otherUserToken: string;
let adminUserId: string;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  frontDoor = await createLock(t, sandbox.applicationId, { name: 'Front Door' });
  garage = await createLock(t, sandbox.applicationId, { name: 'Garage' });
  foreignLock = await createLock(t, other.applicationId, { name: 'Elsewhere' });
  userToken = await appUserToken(sandbox, 'tile-user');
  adminToken = await appUserToken(sandbox, 'tile-admin');
  otherUserToken = await appUserToken(other, 'other-user');
  const user = await certify(t, userToken);
  const admin = await certify(t, adminToken);
  adminUserId = admin.userId;
  const otherUser = await certify(t, otherUserToken);
  await share(t, frontDoor, user.userId, { role: 'USER' });
  await share(t, frontDoor, admin.userId, { role: 'ADMIN' });
  await share(t, garage, admin.userId, { role: 'ADMIN' });
  await share(t, foreignLock, otherUser.userId, { role: 'ADMIN' });
});
afterAll(() => t?.close());

const call = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, token: string | null, payload?: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url: `/api${url}`, headers: { ...(token ? bearer(token) : {}), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
const tileRows = async (tileId: string) => (await t.database.db.select({ n: count() }).from(tileLocks).where(eq(tileLocks.tileId, tileId)))[0]!.n;
/** The headless SDK sends `Accept: application/vnd.doordeck.api-v3+json` on GET /tile and v2 on PUT. */
const V3 = { accept: 'application/vnd.doordeck.api-v3+json' };
const V2 = { accept: 'application/vnd.doordeck.api-v2+json', 'content-type': 'application/json' };

describe('the archived JavaScript SDK (deviceOperation.js)', () => {
  it('link: PUT /device/{lockId}/tile/{tileId} with a null body, then getLockFromTile finds the lock; delink removes it', async () => {
    const tileId = randomUUID();
    // axios.put(url, null, …): no body, no content type.
    expect((await call('PUT', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    const found = await call('GET', `/tile/${tileId}`, userToken);
    expect(found.statusCode).toBe(200);
    expect(found.json()).toEqual({ siteId: sandbox.applicationId, tileId, deviceIds: [frontDoor] } satisfies TileLocks);
    // Linked twice: a 409, nothing changed.
    const twice = await call('PUT', `/device/${frontDoor}/tile/${tileId}`, adminToken, '', { 'content-type': 'application/json' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().message).toBe(tileErrors.alreadyLinked);
    expect(await tileRows(tileId)).toBe(1);
    expect((await call('DELETE', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    const gone = await call('GET', `/tile/${tileId}`, userToken);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ code: 404, message: tileErrors.noDevices });
    expect((await call('DELETE', `/device/${frontDoor}/tile/${tileId}`, adminToken)).json().message).toBe(tileErrors.notLinked);
  });

  it('a user (not an admin) may not link; a stranger to the lock gets 404; a bad tile id is a 400', async () => {
    const tileId = randomUUID();
    const asUser = await call('PUT', `/device/${frontDoor}/tile/${tileId}`, userToken);
    expect(asUser.statusCode).toBe(403);
    expect(asUser.json().message).toBe(tileErrors.notAdmin);
    expect((await call('PUT', `/device/${garage}/tile/${tileId}`, userToken)).statusCode).toBe(404);
    expect((await call('PUT', `/device/${frontDoor}/tile/${tileId}`, otherUserToken)).statusCode).toBe(404);
    expect((await call('PUT', `/device/${frontDoor}/tile/not-a-uuid`, adminToken)).json()).toEqual({ code: 400, message: tileErrors.tileIdInvalid });
    expect(await tileRows(tileId)).toBe(0);
  });
});

describe('the headless SDK (TilesClient.kt)', () => {
  it('associateMultipleLocks then getLocksBelongingToTile; an empty list dissociates (404 after)', async () => {
    const tileId = randomUUID();
    const body = { siteId: sandbox.applicationId, devices: [frontDoor, garage] }; // AssociateMultipleLocksRequest
    expect((await call('PUT', `/tile/${tileId}`, adminToken, body, V2)).statusCode).toBe(204);
    const asAdmin = await call('GET', `/tile/${tileId}`, adminToken, undefined, V3);
    expect(asAdmin.json()).toEqual({ siteId: sandbox.applicationId, tileId, deviceIds: [frontDoor, garage] });
    // The user only has the Front Door: only it is answered.
    expect((await call('GET', `/tile/${tileId}`, userToken, undefined, V3)).json()).toEqual({ siteId: sandbox.applicationId, tileId, deviceIds: [frontDoor] });
    // The owner (a portal token) is admin of both.
    expect((await call('GET', `/tile/${tileId}`, sandbox.owner.token)).json().deviceIds).toEqual([frontDoor, garage]);
    expect((await call('PUT', `/tile/${tileId}`, adminToken, { siteId: sandbox.applicationId, devices: [garage] }, V2)).statusCode).toBe(204);
    expect((await call('GET', `/tile/${tileId}`, userToken)).statusCode).toBe(404);
    expect((await call('PUT', `/tile/${tileId}`, adminToken, { siteId: sandbox.applicationId, devices: [] }, V2)).statusCode).toBe(204);
    expect((await call('GET', `/tile/${tileId}`, adminToken, undefined, V3)).statusCode).toBe(404);
  });

  it('with a real site: the tile answers that site; a lock outside the site is a 409 and nothing changes', async () => {
    const site = await call('POST', `/platform/application/${sandbox.applicationId}/site`, sandbox.owner.token, { name: `Tile HQ ${randomUUID().slice(0, 4)}` });
    expect(site.statusCode).toBe(201);
    const siteId = site.json().id as string;
    expect((await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${frontDoor}/site`, sandbox.owner.token, { siteId })).statusCode).toBe(204);
    const tileId = randomUUID();
    const outside = await call('PUT', `/tile/${tileId}`, adminToken, { siteId, devices: [frontDoor, garage] }, V2);
    expect(outside.statusCode).toBe(409);
    expect(outside.json().message).toBe(tileErrors.lockNotInSite);
    expect(await tileRows(tileId)).toBe(0);
    expect((await call('PUT', `/tile/${tileId}`, adminToken, { siteId, devices: [frontDoor] }, V2)).statusCode).toBe(204);
    expect((await call('GET', `/tile/${tileId}`, userToken)).json()).toEqual({ siteId, tileId, deviceIds: [frontDoor] });
    await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${frontDoor}/site`, sandbox.owner.token, { siteId: null });
  });

  it('refuses bad input with a clear 4xx and changes nothing', async () => {
    const tileId = randomUUID();
    const cases: [unknown, number, string][] = [
      [{ siteId: sandbox.applicationId, devices: [frontDoor, frontDoor] }, 400, tileErrors.duplicateLock],
      [{ siteId: sandbox.applicationId, devices: Array.from({ length: MAX_LOCKS_PER_TILE + 1 }, () => randomUUID()) }, 400, tileErrors.tooManyLocks],
      [{ siteId: sandbox.applicationId, devices: ['nope'] }, 400, tileErrors.lockIdInvalid],
      [{ siteId: 'nope', devices: [frontDoor] }, 400, tileErrors.siteIdInvalid],
      [{ siteId: other.applicationId, devices: [frontDoor] }, 404, siteErrors.siteNotFound],
      [{ siteId: randomUUID(), devices: [frontDoor] }, 404, siteErrors.siteNotFound],
      [{ siteId: sandbox.applicationId, devices: [foreignLock] }, 404, lockErrors.lockNotFound],
      [{ siteId: sandbox.applicationId, devices: [randomUUID()] }, 404, lockErrors.lockNotFound],
      [{ siteId: sandbox.applicationId, devices: [frontDoor] }, 403, tileErrors.notAdmin],
    ];
    for (const [body, status, message] of cases) {
      const token = status === 403 ? userToken : adminToken;
      const res = await call('PUT', `/tile/${tileId}`, token, body, V2);
      expect({ status: res.statusCode, message: res.json().message }, JSON.stringify(body).slice(0, 80)).toEqual({ status, message: expect.stringContaining(message) });
    }
    expect((await call('PUT', '/tile/not-a-uuid', adminToken, { siteId: sandbox.applicationId, devices: [] })).statusCode).toBe(400);
    expect(await t.database.db.select().from(tiles).where(eq(tiles.id, tileId))).toEqual([]);
    expect((await call('GET', '/tile/not-a-uuid', adminToken)).statusCode).toBe(404);
  });
});

describe('scope: one application per tile, nothing of another application revealed', () => {
  it('a tile of one application cannot be linked to a lock of another (409), and is a 404 to the other application', async () => {
    const tileId = randomUUID();
    expect((await call('PUT', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    const foreign = await call('PUT', `/device/${foreignLock}/tile/${tileId}`, otherUserToken);
    expect(foreign.statusCode).toBe(409);
    expect(foreign.json().message).toBe(tileErrors.otherApplication);
    const viaPut = await call('PUT', `/tile/${tileId}`, otherUserToken, { siteId: other.applicationId, devices: [foreignLock] });
    expect(viaPut.statusCode).toBe(409);
    const seen = await call('GET', `/tile/${tileId}`, otherUserToken);
    expect(seen.statusCode).toBe(404);
    expect(seen.body).not.toContain(frontDoor);
    expect((await call('GET', `/tile/${tileId}`, other.owner.token)).statusCode).toBe(404);
    expect((await call('GET', `/tile/${tileId}/lock`, otherUserToken)).statusCode).toBe(404);
    expect(await tileRows(tileId)).toBe(1);
  });

  it('GET /tile/{tileId}/lock answers the portal’s Lock shape, and the tile page unlocks it with a signed operation', async () => {
    const tileId = randomUUID();
    expect((await call('PUT', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    const res = await call('GET', `/tile/${tileId}/lock`, userToken);
    expect(res.statusCode).toBe(200);
    const [lock] = res.json() as Lock[];
    expect(lock).toMatchObject({ id: frontDoor, name: 'Front Door', applicationId: sandbox.applicationId, state: { locked: true } });
    const holder = await certify(t, userToken);
    expect((await execute(t, frontDoor, userToken, signOperation(holder, frontDoor, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
  });
});

describe('the owner’s tiles of a lock', () => {
  it('makes a tile, lists it with its short URL, serves its QR code as SVG, removes it', async () => {
    const shed = await createLock(t, sandbox.applicationId, { name: 'Shed' });
    await share(t, shed, (await certify(t, adminToken)).userId, { role: 'ADMIN' });
    const base = `/platform/application/${sandbox.applicationId}/lock/${shed}/tile`;
    const made = await call('POST', base, sandbox.owner.token);
    expect(made.statusCode).toBe(201);
    const tile = made.json() as LockTile;
    expect(tile.url).toBe(`${t.app.config.publicUrl}/t/${tile.tileId}`);
    expect((await call('GET', base, sandbox.owner.token)).json()).toEqual([expect.objectContaining({ tileId: tile.tileId, url: tile.url, otherLockIds: [] })]);
    const qr = await call('GET', `${base}/${tile.tileId}/qr`, sandbox.owner.token);
    expect(qr.statusCode).toBe(200);
    expect(qr.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(qr.body).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect((await call('GET', `${base}/${randomUUID()}/qr`, sandbox.owner.token)).statusCode).toBe(404);
    // Another application's owner: the same 404 as a missing application.
    expect((await call('GET', `${base}/${tile.tileId}/qr`, other.owner.token)).statusCode).toBe(404);
    expect((await call('GET', `/tile/${tile.tileId}`, adminToken)).json().deviceIds).toEqual([shed]);
    expect((await call('DELETE', `${base}/${tile.tileId}`, sandbox.owner.token)).statusCode).toBe(204);
    expect((await call('GET', base, sandbox.owner.token)).json()).toEqual([]);
    expect((await call('DELETE', `${base}/${tile.tileId}`, sandbox.owner.token)).statusCode).toBe(404);
  });
});

describe('the application’s change history', () => {
  it('records the SDKs’ tile changes (link, associate, delink) with the acting admin, in order', async () => {
    const tileId = randomUUID();
    expect((await call('PUT', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    expect((await call('PUT', `/tile/${tileId}`, adminToken, { siteId: sandbox.applicationId, devices: [frontDoor, garage] }, V2)).statusCode).toBe(204);
    // The same locks again: nothing changed, nothing recorded.
    expect((await call('PUT', `/tile/${tileId}`, adminToken, { siteId: sandbox.applicationId, devices: [frontDoor, garage] }, V2)).statusCode).toBe(204);
    expect((await call('DELETE', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(204);
    // A refused change records nothing.
    expect((await call('DELETE', `/device/${frontDoor}/tile/${tileId}`, adminToken)).statusCode).toBe(404);
    const rows = await t.database.db
      .select()
      .from(applicationChanges)
      .where(and(eq(applicationChanges.applicationId, sandbox.applicationId), eq(applicationChanges.subject, tileId)))
      .orderBy(asc(applicationChanges.seq));
    const entry = (changes: unknown) => ({ kind: 'tile', actorUserId: adminUserId, changes });
    expect(rows.map((r) => ({ kind: r.kind, actorUserId: r.actorUserId, changes: r.changes }))).toEqual([
      entry([
        { field: 'tile', before: null, after: tileId },
        { field: 'locks', before: null, after: ['Front Door'] },
      ]),
      entry([{ field: 'locks', before: ['Front Door'], after: ['Front Door', 'Garage'] }]),
      entry([{ field: 'locks', before: ['Front Door', 'Garage'], after: ['Garage'] }]),
    ]);
  });
});
