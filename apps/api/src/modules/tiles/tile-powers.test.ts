import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { LOCK_USER_TOKEN_TTL_HOURS, tileErrors, type LockTile } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { applicationUsers, lockShares, tileLocks, tiles } from '../../db/schema.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, share, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * What a tile's sign-in may do, and what a tile tells someone of another application: a lock-user token
 * certifies keys, looks people up and invites them only while its user holds a share; PUT /tile/{tileId}
 * with no lock of the caller's answers another application's tile as an unknown one.
 */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let door: string;

beforeAll(async () => {
  t = await createTestApp({ DIRECTORY_RATE_LIMIT_MAX: '1000' });
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  door = await createLock(t, sandbox.applicationId, { name: 'Tile Door' });
});
afterAll(() => t?.close());

/** A key the JS SDK would register: raw Ed25519, standard base64. */
const ephemeralKey = () => generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
const json = { 'content-type': 'application/json' };

/** A person signed in at a tile: an application user with a share of the door, and the lock-user token a spent link answers. */
async function signedInAtTile(prefix: string, role: 'USER' | 'ADMIN' = 'USER') {
  const email = uniqueEmail(prefix);
  const [user] = await t.database.db.insert(applicationUsers).values({ applicationId: sandbox.applicationId, email, status: 'pending' }).returning({ id: applicationUsers.id });
  await share(t, door, user!.id, { role });
  const { token } = await t.app.tokens.signLockUser({ sub: user!.id, app: sandbox.applicationId }, LOCK_USER_TOKEN_TTL_HOURS * 3600);
  return { id: user!.id, email, token };
}

/** The three powers beyond opening doors, each as the SDKs call it. */
const powers = (token: string) => ({
  certificate: () => t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: { ...bearer(token), ...json }, payload: JSON.stringify({ ephemeralKey: ephemeralKey() }) }),
  directory: () => t.app.inject({ method: 'POST', url: '/api/directory/query', headers: { ...bearer(token), ...json }, payload: JSON.stringify({ email: 'someone@example.com' }) }),
  invite: () => t.app.inject({ method: 'POST', url: `/api/share/invite/${encodeURIComponent(uniqueEmail('invitee'))}`, headers: bearer(token) }),
});

describe('a tile’s sign-in', () => {
  it('certifies keys, looks people up and invites only while its share has not ended: once it has, each is a 401', async () => {
    const guest = await signedInAtTile('tile-admin', 'ADMIN');
    const can = powers(guest.token);
    expect((await can.certificate()).statusCode).toBe(200);
    expect((await can.directory()).statusCode).toBe(404);
    expect((await can.invite()).statusCode).toBe(200);
    // The share ends (its end passes): the token has 12 hours left, its powers none.
    await t.database.db.update(lockShares).set({ endsAt: new Date(Date.now() - 1000) }).where(eq(lockShares.userId, guest.id));
    for (const [name, call] of Object.entries(can)) expect({ name, status: (await call()).statusCode }).toEqual({ name, status: 401 });
  });

  it('loses them at once when its share is revoked or its invitation expires', async () => {
    const revoked = await signedInAtTile('tile-revoked');
    expect((await powers(revoked.token).certificate()).statusCode).toBe(200);
    await t.database.db.delete(lockShares).where(eq(lockShares.userId, revoked.id));
    expect((await powers(revoked.token).certificate()).statusCode).toBe(401);
    expect((await powers(revoked.token).directory()).statusCode).toBe(401);

    const lapsed = await signedInAtTile('tile-lapsed');
    expect((await powers(lapsed.token).certificate()).statusCode).toBe(200);
    await t.database.db.update(lockShares).set({ inviteExpiresAt: new Date(Date.now() - 1000) }).where(eq(lockShares.userId, lapsed.id));
    expect((await powers(lapsed.token).certificate()).statusCode).toBe(401);
    expect((await powers(lapsed.token).directory()).statusCode).toBe(401);
  });

  it('runs its first request once: a new tile is linked (204, one link) and an unknown person is a 404', async () => {
    const admin = await signedInAtTile('first-request', 'ADMIN');
    const tileId = randomUUID();
    const linked = await t.app.inject({ method: 'PUT', url: `/api/device/${door}/tile/${tileId}`, headers: bearer(admin.token) });
    expect([linked.statusCode, linked.body]).toEqual([204, '']);
    expect(await t.database.db.select().from(tileLocks).where(eq(tileLocks.tileId, tileId))).toHaveLength(1);
    const other = await signedInAtTile('first-lookup');
    const lookup = await powers(other.token).directory();
    expect({ status: lookup.statusCode, code: lookup.json().code }).toEqual({ status: 404, code: 404 });
  });

  it('an application’s own token keeps its powers without a share (its backend vouches for the user)', async () => {
    const token = await appUserToken(sandbox, `no-share-${randomUUID()}`);
    expect((await certify(t, token)).chain.length).toBeGreaterThan(0);
    expect((await powers(token).directory()).statusCode).toBe(404);
  });
});

describe('PUT /tile/{tileId} and another application’s tile', () => {
  it('with no lock named, another application’s tile is answered exactly as an unknown one, and no tile is made', async () => {
    const made = await t.app.inject({ method: 'POST', url: `/api/platform/application/${other.applicationId}/lock/${await createLock(t, other.applicationId)}/tile`, headers: bearer(other.owner.token) });
    const foreignTile = (made.json() as LockTile).tileId;
    const unknownTile = randomUUID();
    const prober = await appUserToken(sandbox, `prober-${randomUUID()}`);
    const probe = (tileId: string, token: string) =>
      t.app.inject({ method: 'PUT', url: `/api/tile/${tileId}`, headers: { ...bearer(token), ...json }, payload: JSON.stringify({ siteId: sandbox.applicationId, devices: [] }) });
    for (const token of [prober, sandbox.owner.token]) {
      const foreign = await probe(foreignTile, token);
      const unknown = await probe(unknownTile, token);
      expect({ status: foreign.statusCode, body: foreign.json() }).toEqual({ status: 404, body: { code: 404, message: tileErrors.noDevices } });
      expect({ status: unknown.statusCode, body: unknown.json() }).toEqual({ status: foreign.statusCode, body: foreign.json() });
    }
    expect(await t.database.db.select().from(tiles).where(eq(tiles.id, unknownTile))).toEqual([]);
    const [kept] = await t.database.db.select().from(tiles).where(eq(tiles.id, foreignTile));
    expect(kept!.applicationId).toBe(other.applicationId);
  });

  it('an admin whose share has ended no longer links or clears tiles', async () => {
    const admin = await signedInAtTile('ended-admin', 'ADMIN');
    const tileId = randomUUID();
    expect((await t.app.inject({ method: 'PUT', url: `/api/device/${door}/tile/${tileId}`, headers: bearer(admin.token) })).statusCode).toBe(204);
    await t.database.db.update(lockShares).set({ endsAt: new Date(Date.now() - 1000) }).where(and(eq(lockShares.userId, admin.id), eq(lockShares.lockId, door)));
    const token = await appUserToken(sandbox, `ended-admin-app-${randomUUID()}`);
    const id = (await certify(t, token)).userId;
    await share(t, door, id, { role: 'ADMIN', endsAt: new Date(Date.now() - 1000) });
    const clear = await t.app.inject({ method: 'PUT', url: `/api/tile/${tileId}`, headers: { ...bearer(token), ...json }, payload: JSON.stringify({ siteId: sandbox.applicationId, devices: [] }) });
    expect(clear.statusCode).toBe(403);
    expect(clear.json().message).toBe(tileErrors.notAdmin);
    const unlink = await t.app.inject({ method: 'DELETE', url: `/api/device/${door}/tile/${tileId}`, headers: bearer(token) });
    expect(unlink.statusCode).toBe(403);
  });
});
