import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockErrors, operationErrors, type DeviceLock, type LockLogPage } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';

/** GET /device/mine, /device/{lockId} and an admin's /device/{lockId}/log. */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let frontDoor: string;
let garage: string;
let foreignLock: string;
let userToken: string;
let adminToken: string;
const START = 1_900_000_000;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  frontDoor = await createLock(t, sandbox.applicationId, { name: 'Front Door', colour: '#112233' });
  garage = await createLock(t, sandbox.applicationId, { name: 'Garage' });
  foreignLock = await createLock(t, other.applicationId, { name: 'Elsewhere' });
  userToken = await appUserToken(sandbox, 'dev-user');
  adminToken = await appUserToken(sandbox, 'dev-admin');
  const user = await certify(t, userToken);
  const admin = await certify(t, adminToken);
  await share(t, frontDoor, user.userId, { role: 'USER', startsAt: new Date(START * 1000), endsAt: new Date((START + 3600) * 1000) });
  await share(t, garage, admin.userId, { role: 'ADMIN' });
  await share(t, frontDoor, admin.userId, { role: 'ADMIN' });
  expect((await execute(t, frontDoor, adminToken, signOperation(admin, frontDoor, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
});
afterAll(() => t?.close());

const get = (url: string, token: string) => t.app.inject({ method: 'GET', url: `/api${url}`, headers: bearer(token) });

describe('GET /device/mine', () => {
  it('lists the locks shared with an application user, with role and bounds', async () => {
    const res = await get('/device/mine', userToken);
    expect(res.statusCode).toBe(200);
    const locks = res.json() as DeviceLock[];
    expect(locks).toHaveLength(1);
    expect(locks[0]).toMatchObject({ id: frontDoor, name: 'Front Door', colour: '#112233', role: 'USER', start: START, end: START + 3600 });
    expect(locks[0]!.settings).toEqual({ unlockTime: 5, usageRequirements: {} });
    expect(locks[0]!.state).toMatchObject({ locked: false, connected: true });
  });

  it("lists every lock of an owner's applications as ADMIN, and nothing of others", async () => {
    const locks = (await get('/device/mine', sandbox.owner.token)).json() as DeviceLock[];
    expect(locks.map((l) => l.id).sort()).toEqual([frontDoor, garage].sort());
    expect(locks.every((l) => l.role === 'ADMIN' && l.start === null && l.end === null)).toBe(true);
    expect(locks.find((l) => l.id === garage)!.state).toEqual({ locked: true, connected: true, unlockedUntil: null });
  });
});

describe('GET /device/{lockId}', () => {
  it('answers a shared lock and 404 for anything else', async () => {
    expect((await get(`/device/${frontDoor}`, userToken)).json()).toMatchObject({ id: frontDoor, role: 'USER' });
    for (const id of [garage, foreignLock, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const res = await get(`/device/${id}`, userToken);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ code: 404, message: lockErrors.lockNotFound });
    }
    expect((await get(`/device/${foreignLock}`, sandbox.owner.token)).statusCode).toBe(404);
  });
});

describe('GET /device/{lockId}/log', () => {
  it('shows the log to admins, newest first', async () => {
    for (const token of [adminToken, sandbox.owner.token]) {
      const res = await get(`/device/${frontDoor}/log`, token);
      expect(res.statusCode).toBe(200);
      const page = res.json() as LockLogPage;
      expect(page.items[0]).toMatchObject({ lockId: frontDoor, type: 'UNLOCK', rejected: false });
    }
  });

  it('refuses users who are not admins, and hides other locks', async () => {
    const res = await get(`/device/${frontDoor}/log`, userToken);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 403, message: operationErrors.notAdmin });
    expect((await get(`/device/${garage}/log`, userToken)).statusCode).toBe(404);
    expect((await get(`/device/${foreignLock}/log`, adminToken)).statusCode).toBe(404);
  });

  it('pages and filters like the owner log', async () => {
    const page = (await get(`/device/${frontDoor}/log?pageSize=1&end=1`, adminToken)).json() as LockLogPage;
    expect(page).toEqual({ items: [], nextCursor: null });
    expect((await get(`/device/${frontDoor}/log?cursor=garbage`, adminToken)).statusCode).toBe(400);
  });
});
