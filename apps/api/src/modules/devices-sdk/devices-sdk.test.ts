import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { CAPABILITY_TYPES, apiErrors, sdkErrors, type SdkAuditEntry, type SdkLock } from '@latchkey/contract';
import { applicationUsers, lockShares, lockUserSettings, sentEmails } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, lockRow, logOf, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';
import { DIRECTORY_PUBLIC_KEY } from './directory.service.js';

/**
 * People and lock properties: every lock-side call of the platform's SDKs with the bodies they
 * send (docs/sdk-parity.md names each test below).
 *
 * Headless SDK (doordeck/doordeck-headless-sdk, doordeck-sdk/src/commonMain/kotlin/com/doordeck/multiplatform/sdk):
 * - clients/LockOperationsClient.kt builds the requests; model/network/Paths.kt names the paths;
 * - model/requests/LockOperationRequests.kt: `UpdateLockNameRequest(name: String?)`,
 *   `UpdateLockFavouriteRequest(favourite: Boolean)`, `UpdateLockColourRequest(colour)`,
 *   `UpdateLockSettingRequest(settings: LockSettingsRequest?)` with `LockSettingsDefaultNameRequest(defaultName:
 *   String?)`, `LockSettingsPermittedAddressesRequest(permittedAddresses: List<String>)`,
 *   `LockSettingsHiddenRequest(hidden: Boolean)`, `UpdateLockSettingUsageRequirementRequest(usageRequirements)`
 *   with `UpdateLockSettingTimeUsageRequirementRequest(time: List<TimeRequirementRequest(start, end, timezone,
 *   days: Set<DayOfWeek>)>)` or `UpdateLockSettingLocationUsageRequirementRequest(location:
 *   LocationRequirementRequest(latitude: Double, longitude: Double, enabled: Boolean, radius: Int, accuracy: Int)?)`;
 *   `UserPublicKeyRequest(email?, telephone?, localKey?, foreignKey?, identity?)`,
 *   `BatchUserPublicKeyRequest(email: List?, telephone: List?, localKey: List?, foreignKey: List?)`;
 *   `@SerialName("BATCH_ADD_USER") BatchShareLockOperationRequest(users: List<ShareLockOperationRequest(user,
 *   publicKey, role: UserRole?, start: Long?, end: Long?)>)`, `@SerialName("REMOVE_USER")
 *   RevokeAccessToALockOperationRequest(users: List<String>)`;
 * - model/responses/LockOperationResponses.kt: BasicLockResponse, BasicUserLockResponse, BasicLockUserResponse,
 *   BasicAuditResponse, BasicUserPublicKeyResponse, BasicBatchUserPublicKeyResponse, BasicShareableLockResponse.
 * kotlinx may write a sealed body's class discriminator (`type`); unknown members are ignored, so both forms are sent.
 */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let lockId: string;
let otherLockId: string;
const V2 = { accept: 'application/vnd.doordeck.api-v2+json' };
const V3 = { accept: 'application/vnd.doordeck.api-v3+json' };
const JSON_TYPE = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestApp({ DIRECTORY_RATE_LIMIT_MAX: '1000' });
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { name: 'Main Entrance' });
  otherLockId = await createLock(t, other.applicationId, { name: 'Elsewhere' });
});
afterAll(() => t?.close());

async function userOf(token: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { userId: string }).userId;
}
async function person(sub: string, role?: 'USER' | 'ADMIN', app: Sandbox = sandbox, lock = lockId) {
  const token = await appUserToken(app, sub);
  const id = await userOf(token);
  if (role) await share(t, lock, id, { role });
  return { token, id };
}
const put = (token: string, id: string, body: unknown) =>
  t.app.inject({ method: 'PUT', url: `/api/device/${id}`, headers: { ...bearer(token), ...JSON_TYPE }, payload: JSON.stringify(body) });
const get = (token: string, url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: `/api${url}`, headers: { ...bearer(token), ...headers } });
const post = (token: string, url: string, body: unknown, headers: Record<string, string> = V2) =>
  t.app.inject({ method: 'POST', url: `/api${url}`, headers: { ...bearer(token), ...JSON_TYPE, ...headers }, payload: JSON.stringify(body) });
const MODEL = 'com.doordeck.multiplatform.sdk.model.requests';

describe('PUT /device/{lockId}: a user’s own alias, favourite and colour (updateLockName / updateLockFavourite / updateLockColour)', () => {
  it('keeps them per user, shows them in the v3 lock and the favourites, and removes them with null', async () => {
    const user = await person('props-user', 'USER');
    const neighbour = await person('props-neighbour', 'USER');
    expect((await put(user.token, lockId, { name: 'My door' })).statusCode).toBe(204);
    expect((await put(user.token, lockId, { type: `${MODEL}.UpdateLockFavouriteRequest`, favourite: true })).statusCode).toBe(204);
    expect((await put(user.token, lockId, { colour: '#FF5733' })).statusCode).toBe(204);

    const mine = (await get(user.token, `/device/${lockId}`, V3)).json() as SdkLock;
    expect(mine).toMatchObject({ id: lockId, name: 'My door', colour: '#FF5733', favourite: true, role: 'USER', start: null, end: null, state: { locked: true, connected: true } });
    expect(mine.settings).toMatchObject({ defaultName: 'Main Entrance', permittedAddresses: [], tiles: [], hidden: false, directAccessEndpoints: [], usageRequirements: { time: [], location: null } });
    expect(Object.keys(mine.settings.capabilities).sort()).toEqual([...CAPABILITY_TYPES].sort());
    // Someone else's view is untouched; the lock's own name and colour too.
    expect(((await get(neighbour.token, `/device/${lockId}`, V3)).json() as SdkLock)).toMatchObject({ name: 'Main Entrance', favourite: false });
    expect((await lockRow(t, lockId)).name).toBe('Main Entrance');
    // GET /device/favourite (getPinnedLocks): BasicLockResponse list.
    const pinned = (await get(user.token, '/device/favourite')).json() as SdkLock[];
    expect(pinned.map((l) => [l.id, l.name, l.favourite])).toEqual([[lockId, 'My door', true]]);
    expect((await get(neighbour.token, '/device/favourite')).json()).toEqual([]);
    // The plain /device/{lockId} keeps its shape for the clients that do not ask for v3.
    expect((await get(user.token, `/device/${lockId}`)).json()).not.toHaveProperty('favourite');

    expect((await put(user.token, lockId, { name: null })).statusCode).toBe(204);
    expect((await put(user.token, lockId, { favourite: false })).statusCode).toBe(204);
    expect(((await get(user.token, `/device/${lockId}`, V3)).json() as SdkLock)).toMatchObject({ name: 'Main Entrance', favourite: false });
    expect((await get(user.token, '/device/favourite')).json()).toEqual([]);
  });
});

describe('PUT /device/{lockId}: an admin’s settings (updateLockSettingDefaultName / setLockSettingPermittedAddresses / updateLockSettingHidden / setLockSettingTimeRestrictions / updateLockSettingLocationRestrictions)', () => {
  it('changes the default name, addresses, hidden, time and location rules, logged as SETTINGS', async () => {
    const admin = await person('props-admin', 'ADMIN');
    const settings = (inner: Record<string, unknown>, kind: string) => ({ type: `${MODEL}.UpdateLockSettingRequest`, settings: { type: `${MODEL}.${kind}`, ...inner } });
    expect((await put(admin.token, lockId, settings({ defaultName: 'Side Door' }, 'LockSettingsDefaultNameRequest'))).statusCode).toBe(204);
    expect((await put(admin.token, lockId, { settings: { permittedAddresses: ['203.0.113.7', '2001:db8::1'] } })).statusCode).toBe(204);
    expect((await put(admin.token, lockId, { settings: { hidden: true } })).statusCode).toBe(204);
    const time = [{ start: '08:00', end: '18:30', timezone: 'Europe/London', days: ['MONDAY', 'FRIDAY'] }];
    expect((await put(admin.token, lockId, { settings: { usageRequirements: { time } } })).statusCode).toBe(204);
    const location = { latitude: 51.5, longitude: -0.12, enabled: true, radius: 150, accuracy: 20 };
    const res = await put(admin.token, lockId, settings({ usageRequirements: { type: `${MODEL}.UpdateLockSettingLocationUsageRequirementRequest`, location } }, 'UpdateLockSettingUsageRequirementRequest'));
    expect(res.statusCode, res.body).toBe(204);

    const row = await lockRow(t, lockId);
    expect(row).toMatchObject({ name: 'Side Door', permittedAddresses: ['203.0.113.7', '2001:db8::1'], hidden: true });
    expect(row.usageRequirements).toEqual({ time, location: { latitude: 51.5, longitude: -0.12, radius: 150, accuracy: 'HIGH', enabled: true } });
    const seen = (await get(admin.token, `/device/${lockId}`, V3)).json() as SdkLock;
    expect(seen.settings).toMatchObject({ defaultName: 'Side Door', hidden: true, usageRequirements: { time, location }, unlockBetweenWindow: { ...time[0], exceptions: [] } });
    expect((await logOf(t, sandbox, lockId)).slice(0, 5).every((e) => e.type === 'SETTINGS' && !e.rejected && e.actor.userId === admin.id)).toBe(true);

    // Location removed with null; the hours stay. Then the lock as it was for the other tests.
    expect((await put(admin.token, lockId, { settings: { usageRequirements: { location: null } } })).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).usageRequirements).toEqual({ time });
    expect((await put(admin.token, lockId, { settings: { usageRequirements: { time: [] } } })).statusCode).toBe(204);
    expect((await put(admin.token, lockId, { settings: { defaultName: 'Main Entrance', hidden: false, permittedAddresses: [] } })).statusCode).toBe(204);
    expect(await lockRow(t, lockId)).toMatchObject({ name: 'Main Entrance', hidden: false, permittedAddresses: [], usageRequirements: {} });
  });

  it('refuses bad input and non-admins with a 4xx, changing nothing', async () => {
    const user = await person('props-plain', 'USER');
    const admin = await person('props-admin2', 'ADMIN');
    const before = await lockRow(t, lockId);
    const cases: [string, unknown, number, string | undefined][] = [
      [user.token, { settings: { hidden: true } }, 403, sdkErrors.notAdmin],
      [admin.token, { name: 'x'.repeat(201) }, 400, undefined],
      [admin.token, { settings: { permittedAddresses: ['not-an-ip'] } }, 400, undefined],
      [admin.token, { settings: { permittedAddresses: ['10.0.0.256'] } }, 400, undefined],
      [admin.token, { settings: { permittedAddresses: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`) } }, 400, undefined],
      [admin.token, { settings: { defaultName: null } }, 400, sdkErrors.defaultNameRequired],
      [admin.token, { settings: { usageRequirements: { location: { latitude: 91, longitude: 0, enabled: true, radius: 10, accuracy: 10 } } } }, 400, undefined],
      [admin.token, { settings: { usageRequirements: { location: { latitude: 1, longitude: 0, enabled: true, radius: 10, accuracy: 5000 } } } }, 400, undefined],
      [admin.token, { colour: 'blue' }, 400, undefined],
      [admin.token, {}, 400, undefined],
    ];
    for (const [token, body, status, message] of cases) {
      const res = await put(token, lockId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      if (message) expect(res.json().message).toBe(message);
    }
    // Unknown ids and another application's lock: the same 404.
    expect((await put(admin.token, '00000000-0000-4000-8000-000000000000', { name: 'x' })).statusCode).toBe(404);
    expect((await put(admin.token, 'not-a-lock', { name: 'x' })).statusCode).toBe(404);
    expect((await put(admin.token, otherLockId, { name: 'x' })).statusCode).toBe(404);
    expect(await lockRow(t, lockId)).toEqual(before);
    expect(await t.database.db.select().from(lockUserSettings).where(eq(lockUserSettings.userId, admin.id))).toEqual([]);
  });
});

describe('permitted addresses (setLockSettingPermittedAddresses) bind every operation', () => {
  it('takes operations only from a listed address once there is one, also right after a cached unlock', async () => {
    const lock = await createLock(t, sandbox.applicationId, { name: 'Address Door' });
    const admin = await person('address-admin', 'ADMIN', sandbox, lock);
    const holder = await certify(t, admin.token);
    const unlock = (remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/device/${lock}/execute`,
        remoteAddress,
        headers: { ...bearer(admin.token), 'content-type': 'application/jwt' },
        payload: signOperation(holder, lock, { type: 'MUTATE_LOCK', locked: false }),
      });
    // None listed: from anywhere (and the standing is now cached on this instance).
    expect((await unlock('198.51.100.1')).statusCode).toBe(204);
    expect((await put(admin.token, lock, { settings: { permittedAddresses: ['203.0.113.7', '2001:db8::1'] } })).statusCode).toBe(204);
    const refused = await unlock('198.51.100.1');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(sdkErrors.addressNotPermitted);
    expect((await logOf(t, sandbox, lock))[0]).toMatchObject({ type: 'UNLOCK', rejected: true, reason: sdkErrors.addressNotPermitted });
    expect((await unlock('203.0.113.7')).statusCode).toBe(204);
    expect((await unlock('::ffff:203.0.113.7')).statusCode).toBe(204);
    expect((await unlock('2001:0db8:0000::0001')).statusCode).toBe(204);
    // Settings and shares too; an empty list takes them from anywhere again.
    const friend = await person('address-friend');
    const share = (remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/device/${lock}/execute`,
        remoteAddress,
        headers: { ...bearer(admin.token), 'content-type': 'application/jwt' },
        payload: signOperation(holder, lock, { type: 'ADD_USER', user: friend.id, role: 'USER' }),
      });
    expect((await share('198.51.100.1')).statusCode).toBe(403);
    expect((await put(admin.token, lock, { settings: { permittedAddresses: [] } })).statusCode).toBe(204);
    expect((await share('198.51.100.1')).statusCode).toBe(204);
  });
});

describe('shareable locks, a lock’s users, a user’s locks (getShareableLocks / getUsersForLock / getLocksForUser)', () => {
  it('answers admins in the SDKs’ shapes, refuses users and other applications', async () => {
    const admin = await person('people-admin', 'ADMIN');
    const user = await person('people-user', 'USER');
    const stranger = await person('people-stranger', 'ADMIN', other, otherLockId);
    const start = Math.floor(Date.now() / 1000) - 60;
    await share(t, lockId, user.id, { role: 'USER', startsAt: new Date(start * 1000), endsAt: null });

    expect((await get(admin.token, '/device/shareable')).json()).toEqual([{ id: lockId, name: 'Main Entrance' }]);
    expect((await get(user.token, '/device/shareable')).json()).toEqual([]);
    // The owner (a portal token) administers every lock of the application.
    expect(((await get(sandbox.owner.token, '/device/shareable')).json() as { id: string }[]).map((l) => l.id)).toContain(lockId);

    const users = (await get(admin.token, `/device/${lockId}/users`)).json() as Record<string, unknown>[];
    expect(users.find((u) => u.userId === user.id)).toEqual({
      userId: user.id,
      email: 'people-user@example.com',
      publicKey: DIRECTORY_PUBLIC_KEY,
      displayName: 'User people-user',
      orphan: false,
      foreign: false,
      role: 'USER',
      start,
      end: null,
    });
    expect((await get(user.token, `/device/${lockId}/users`)).statusCode).toBe(403);
    expect((await get(stranger.token, `/device/${lockId}/users`)).statusCode).toBe(404);
    // An admin whose share has ended is no admin any more.
    const former = await person('people-former', 'ADMIN');
    await share(t, lockId, former.id, { role: 'ADMIN', endsAt: new Date(Date.now() - 1000) });
    expect((await get(former.token, `/device/${lockId}/users`)).statusCode).toBe(403);
    expect((await get(former.token, '/device/shareable')).json()).toEqual([]);
    expect((await put(former.token, lockId, { settings: { hidden: true } })).statusCode).toBe(403);
    expect((await get(former.token, `/user/${user.id}`)).statusCode).toBe(403);

    const locksOfUser = (await get(admin.token, `/user/${user.id}`)).json();
    expect(locksOfUser).toMatchObject({ userId: user.id, email: 'people-user@example.com', publicKey: DIRECTORY_PUBLIC_KEY, orphan: false, foreign: false, devices: [{ deviceId: lockId, role: 'USER', start, end: null }] });
    expect((await get(sandbox.owner.token, `/user/${user.id}`)).json()).toMatchObject({ devices: [{ deviceId: lockId }] });
    expect((await get(user.token, `/user/${admin.id}`)).statusCode).toBe(403);
    // Another application's user is not found, whoever asks; nor is an id that is no user.
    expect((await get(admin.token, `/user/${stranger.id}`)).statusCode).toBe(404);
    expect((await get(stranger.token, `/user/${user.id}`)).statusCode).toBe(404);
    expect((await get(admin.token, '/user/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await get(admin.token, '/user/nobody')).statusCode).toBe(404);
  });
});

describe('audit trails (getLockAuditTrail / getAuditForUser): v2 lists with start and end', () => {
  it('lists a lock’s and a user’s entries newest first, within the bounds', async () => {
    const admin = await person('audit-admin', 'ADMIN');
    const holder = await certify(t, admin.token);
    const from = Math.floor(Date.now() / 1000) - 1;
    expect((await execute(t, lockId, admin.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
    expect((await execute(t, lockId, admin.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: true }))).statusCode).toBe(204);
    const to = Math.ceil(Date.now() / 1000) + 1;

    const trail = (await get(admin.token, `/device/${lockId}/log?start=${from}&end=${to}`, V2)).json() as SdkAuditEntry[];
    expect(trail.slice(0, 2).map((e) => e.type)).toEqual(['DOOR_LOCK', 'DOOR_UNLOCK']);
    expect(trail[0]).toMatchObject({ deviceId: lockId, issuer: { userId: admin.id, email: 'audit-admin@example.com' }, subject: null, rejected: false, rejectionReason: null });
    expect(Number(trail[0]!.timestamp)).toBeGreaterThanOrEqual(from);
    expect((await get(admin.token, `/device/${lockId}/log?start=${to + 100}&end=${to + 200}`, V2)).json()).toEqual([]);
    // Without the v2 header: the page the portal's clients read.
    expect((await get(admin.token, `/device/${lockId}/log`)).json()).toHaveProperty('items');

    const mine = (await get(sandbox.owner.token, `/user/${admin.id}/log?start=${from}&end=${to}`, V2)).json() as SdkAuditEntry[];
    expect(mine.map((e) => e.type)).toEqual(['DOOR_LOCK', 'DOOR_UNLOCK']);
    expect((await get(admin.token, `/user/${admin.id}/log?start=${to}&end=${from}`, V2)).statusCode).toBe(400);
  });
});

describe('finding people to share with (getUserPublicKey, …ByEmail / Telephone / LocalKey / ForeignKey, batch forms)', () => {
  it('POST /share/invite/{email}?visitor= makes a pending user with one branded invitation', async () => {
    const sharer = await person('inviter', 'ADMIN');
    const invited = `new.person.${Date.now()}@example.com`;
    // The headless SDK: Content-Type application/json and no body.
    const first = await t.app.inject({ method: 'POST', url: `/api/share/invite/${encodeURIComponent(invited)}?visitor=false`, headers: { ...bearer(sharer.token), ...JSON_TYPE } });
    expect(first.statusCode, first.body).toBe(200);
    const { id, publicKey } = first.json() as { id: string; publicKey: string };
    expect(publicKey).toBe(DIRECTORY_PUBLIC_KEY);
    const [pending] = await t.database.db.select().from(applicationUsers).where(eq(applicationUsers.id, id));
    expect(pending).toMatchObject({ applicationId: sandbox.applicationId, email: invited, status: 'pending' });
    const mails = () => t.database.db.select().from(sentEmails).where(eq(sentEmails.to, invited));
    expect((await mails()).map((m) => m.kind)).toEqual(['lock-invitation']);
    // Again (visitor=true): the same user, no second email.
    const again = await t.app.inject({ method: 'POST', url: `/api/share/invite/${invited.toUpperCase()}?visitor=true`, headers: bearer(sharer.token) });
    expect(again.json()).toEqual({ id, publicKey });
    expect(await mails()).toHaveLength(1);
    // A known user: their id. Another application's user with the same email is someone else.
    const known = await t.app.inject({ method: 'POST', url: '/api/share/invite/inviter@example.com', headers: bearer(sharer.token) });
    expect(known.json().id).toBe(sharer.id);
    const elsewhere = await person('inviter', undefined, other);
    const theirs = await t.app.inject({ method: 'POST', url: '/api/share/invite/inviter@example.com', headers: bearer(elsewhere.token) });
    expect(theirs.json().id).toBe(elsewhere.id);
    expect((await t.app.inject({ method: 'POST', url: '/api/share/invite/not-an-email', headers: bearer(sharer.token) })).statusCode).toBe(400);
  });

  it('POST /directory/query: v1 by email, localKey, foreignKey; telephone and unknowns 404; v2 batches; scoped to the application', async () => {
    const asker = await person('dir-asker');
    const target = await person('dir-target');
    const stranger = await person('dir-stranger', undefined, other);
    const one = { id: target.id, publicKey: DIRECTORY_PUBLIC_KEY };
    expect((await post(asker.token, '/directory/query', { email: 'DIR-TARGET@example.com' }, {})).json()).toEqual(one);
    expect((await post(asker.token, '/directory/query', { localKey: target.id }, {})).json()).toEqual(one);
    expect((await post(asker.token, '/directory/query', { foreignKey: 'dir-target' }, {})).json()).toEqual(one);
    // kotlinx writes the members it does not set as null.
    expect((await post(asker.token, '/directory/query', { email: null, telephone: null, localKey: null, foreignKey: 'dir-target', identity: null }, {})).json()).toEqual(one);
    for (const body of [{ telephone: '+441234567890' }, { email: 'nobody@example.com' }, { localKey: stranger.id }, { foreignKey: 'dir-stranger' }, { email: 'dir-stranger@example.com' }]) {
      const res = await post(asker.token, '/directory/query', body, {});
      expect(res.statusCode, JSON.stringify(body)).toBe(404);
      expect(res.json()).toEqual({ code: 404, message: 'email' in body ? apiErrors.userNotFound : sdkErrors.userNotFound });
    }
    const batch = (await post(asker.token, '/directory/query', { email: ['dir-target@example.com', 'nobody@example.com', 'dir-asker@example.com'] })).json();
    expect(batch).toEqual([
      { id: target.id, email: 'dir-target@example.com', foreignKey: 'dir-target', phone: null, publicKey: DIRECTORY_PUBLIC_KEY },
      { id: asker.id, email: 'dir-asker@example.com', foreignKey: 'dir-asker', phone: null, publicKey: DIRECTORY_PUBLIC_KEY },
    ]);
    expect(((await post(asker.token, '/directory/query', { localKey: [target.id, stranger.id] })).json() as { id: string }[]).map((u) => u.id)).toEqual([target.id]);
    expect(((await post(asker.token, '/directory/query', { foreignKey: ['dir-asker', 'dir-stranger'] })).json() as { id: string }[]).map((u) => u.id)).toEqual([asker.id]);
    expect((await post(asker.token, '/directory/query', { telephone: ['+441234567890'] })).json()).toEqual([]);
    // Bad input: two kinds, none, a batch over 25, an email that is none.
    for (const body of [{ email: 'a@b.co', localKey: target.id }, {}, { email: Array.from({ length: 26 }, (_, i) => `u${i}@example.com`) }, { email: 'nope' }]) {
      expect((await post(asker.token, '/directory/query', body)).statusCode, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
  });

  it('counts each name against the directory budget, like the portal’s look-up', async () => {
    const limited = await createTestApp({ DIRECTORY_RATE_LIMIT_MAX: '3' });
    try {
      const s = await createSandbox(limited);
      const token = await appUserToken(s, 'budget');
      const ask = (body: unknown) => limited.app.inject({ method: 'POST', url: '/api/directory/query', headers: { ...bearer(token), ...JSON_TYPE }, payload: JSON.stringify(body) });
      expect((await ask({ email: ['a@example.com', 'b@example.com'] })).statusCode).toBe(200);
      expect((await ask({ foreignKey: 'budget' })).statusCode).toBe(200);
      const over = await ask({ foreignKey: 'budget' });
      expect(over.statusCode).toBe(429);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect((await limited.app.inject({ method: 'POST', url: '/api/share/invite/c@example.com', headers: bearer(token) })).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('batch sharing and revocation as the headless SDK signs them (batchShareLock, revokeAccessToLock)', () => {
  /** The JVM SDK's JWS: header {alg, x5c, type}, claims with a jti and every unset member as null. */
  const sdkSigned = (holder: KeyHolder, operation: unknown) => signOperation(holder, lockId, operation, { header: { alg: 'EdDSA', x5c: holder.chain, type: 'JWT' }, encoding: 'base64' });

  it('shares with several users in one BATCH_ADD_USER (roles, start/end), all or none, and removes them in one REMOVE_USER', async () => {
    const admin = await person('batch-admin', 'ADMIN');
    const holder = await certify(t, admin.token);
    // The SDK asks the lock first (GET /device/{id}, v3) and batches only when it reports BATCH_SHARING_25.
    expect(((await get(admin.token, `/device/${lockId}`, V3)).json() as SdkLock).settings.capabilities.BATCH_SHARING_25).toBe('SUPPORTED');
    const a = await person('batch-a');
    const b = await person('batch-b');
    const end = Math.floor(Date.now() / 1000) + 86_400;
    const users = [
      { user: a.id, publicKey: DIRECTORY_PUBLIC_KEY, role: 'ADMIN', start: null, end: null },
      { user: b.id, publicKey: DIRECTORY_PUBLIC_KEY, role: 'USER', start: Math.floor(Date.now() / 1000) - 10, end },
    ];
    const shared = await execute(t, lockId, admin.token, sdkSigned(holder, { type: 'BATCH_ADD_USER', users }));
    expect(shared.statusCode, shared.body).toBe(204);
    const shares = async () =>
      (await t.database.db.select().from(lockShares).where(eq(lockShares.lockId, lockId))).filter((s) => [a.id, b.id].includes(s.userId)).map((s) => [s.userId, s.role, s.endsAt && s.endsAt.getTime() / 1000]);
    expect((await shares()).sort()).toEqual([[a.id, 'ADMIN', null], [b.id, 'USER', end]].sort());
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SHARE', rejected: false });

    // All or none: an unknown user in the batch refuses it, and the other share is not made; 26 users is a 400.
    const c = await person('batch-c');
    const unknown = { user: '00000000-0000-4000-8000-000000000000', publicKey: DIRECTORY_PUBLIC_KEY, role: 'USER', start: null, end: null };
    expect((await execute(t, lockId, admin.token, sdkSigned(holder, { type: 'BATCH_ADD_USER', users: [{ ...unknown, user: c.id }, unknown] }))).statusCode).toBe(404);
    const tooMany = Array.from({ length: 26 }, () => ({ ...unknown, user: c.id }));
    expect((await execute(t, lockId, admin.token, sdkSigned(holder, { type: 'BATCH_ADD_USER', users: tooMany }))).statusCode).toBe(400);
    // 25, each with the directory's key: the largest batch the SDK sends fits (all to c: one share).
    const full = await execute(t, lockId, admin.token, sdkSigned(holder, { type: 'BATCH_ADD_USER', users: tooMany.slice(1).map((u) => ({ ...u, user: c.id })) }));
    expect(full.statusCode, full.body).toBe(204);
    await t.database.db.delete(lockShares).where(eq(lockShares.userId, c.id));
    expect(await t.database.db.select().from(lockShares).where(eq(lockShares.userId, c.id))).toEqual([]);
    // A plain user may not batch-share.
    const plainHolder = await certify(t, b.token);
    expect((await execute(t, lockId, b.token, sdkSigned(plainHolder, { type: 'BATCH_ADD_USER', users: [{ ...unknown, user: c.id }] }))).statusCode).toBe(403);

    const removed = await execute(t, lockId, admin.token, sdkSigned(holder, { type: 'REMOVE_USER', users: [a.id, b.id] }));
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await shares()).toEqual([]);
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'REVOKE', rejected: false });
  });
});

describe('the archived JavaScript SDK (doordeck/doordeck-sdk-javascript, common/services/deviceOperation.js)', () => {
  it('getUser by email and by id, share, changeRole and remove, byte for byte as it sends them', async () => {
    const admin = await person('js-admin', 'ADMIN');
    const holder = await certify(t, admin.token);
    const friend = await person('js-friend');
    // getUserByEmail: axios.post(baseUrl + "/share/invite/" + userEmail, null, {headers: {Authorization}}) — no body, no Content-Type.
    const byEmail = await t.app.inject({ method: 'POST', url: '/api/share/invite/js-friend@example.com', headers: { authorization: `Bearer ${admin.token}` } });
    expect(byEmail.statusCode, byEmail.body).toBe(200);
    const user = { userId: (byEmail.json() as { id: string }).id, publicKey: (byEmail.json() as { publicKey: string }).publicKey, email: 'js-friend@example.com' };
    expect(user.userId).toBe(friend.id);
    // getUserById: axios.post(baseUrl + "/directory/query", { localKey: id }).
    const byId = await t.app.inject({ method: 'POST', url: '/api/directory/query', headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ localKey: friend.id }) });
    expect(byId.json()).toEqual({ id: friend.id, publicKey: DIRECTORY_PUBLIC_KEY });

    // The JS SDK's signer: {alg, typ, x5c}, standard base64, no jti, sent bare as application/json.
    const js = (operation: unknown) => signOperation(holder, lockId, operation, { jti: null, encoding: 'base64' });
    const send = (operation: unknown) => execute(t, lockId, admin.token, js(operation), 'application/json');
    const role = async () => (await t.database.db.select().from(lockShares).where(eq(lockShares.userId, friend.id)))[0]?.role;
    // share(…, start == null && end == null): {type, publicKey, user, role}.
    expect((await send({ type: 'ADD_USER', publicKey: user.publicKey, user: user.userId, role: 'USER' })).statusCode).toBe(204);
    expect(await role()).toBe('USER');
    // changeRole: the same ADD_USER with the new role.
    expect((await send({ type: 'ADD_USER', publicKey: user.publicKey, user: user.userId, role: 'ADMIN' })).statusCode).toBe(204);
    expect(await role()).toBe('ADMIN');
    // share with start and end.
    const start = Math.floor(Date.now() / 1000);
    expect((await send({ type: 'ADD_USER', publicKey: user.publicKey, user: user.userId, role: 'USER', start, end: start + 3600 })).statusCode).toBe(204);
    const [bounded] = await t.database.db.select().from(lockShares).where(eq(lockShares.userId, friend.id));
    expect([bounded?.role, bounded?.startsAt?.getTime(), bounded?.endsAt?.getTime()]).toEqual(['USER', start * 1000, (start + 3600) * 1000]);
    // remove(…, users).
    expect((await send({ type: 'REMOVE_USER', users: [user.userId] })).statusCode).toBe(204);
    expect(await role()).toBeUndefined();
  });
});
