import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT_LENGTH, siteErrors, type DeviceLock, type OwnerSite, type Site, type SiteUser } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, share, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * Sites: the headless SDK's SitesClient.kt (doordeck/doordeck-headless-sdk) — GET /site,
 * /site/{siteId}/device, /site/{siteId}/user — read back as its response models in
 * model/responses/NetworkSiteResponses.kt (NetworkSiteResponse, NetworkUserForSiteResponse; the devices
 * are NetworkLockResponse, GET /device/mine's shape). The SDK sends no body on these calls.
 */
let t: TestApp;
let sandbox: Sandbox;
let other: Sandbox;
let frontDoor: string;
let garage: string;
let userToken: string;
let adminToken: string;
let userId: string;
let adminId: string;
let siteId: string;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  other = await createSandbox(t);
  frontDoor = await createLock(t, sandbox.applicationId, { name: 'Front Door' });
  garage = await createLock(t, sandbox.applicationId, { name: 'Garage' });
  userToken = await appUserToken(sandbox, 'site-user');
  adminToken = await appUserToken(sandbox, 'site-admin');
  userId = (await certify(t, userToken)).userId;
  adminId = (await certify(t, adminToken)).userId;
  await share(t, frontDoor, userId, { role: 'USER' });
  await share(t, frontDoor, adminId, { role: 'ADMIN' });
});
afterAll(() => t?.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
  t.app.inject({ method, url: `/api${url}`, headers: bearer(token), ...(payload ? { payload } : {}) });
const owner = (path = '') => `/platform/application/${sandbox.applicationId}/site${path}`;

describe('owner routes', () => {
  it('creates, renames and lists sites, and moves locks between them', async () => {
    const made = await call('POST', owner(), sandbox.owner.token, { name: 'Head Office' });
    expect(made.statusCode).toBe(201);
    siteId = (made.json() as OwnerSite).id;
    expect(made.headers.location).toMatch(new RegExp(`/site/${siteId}$`));
    const second = (await call('POST', owner(), sandbox.owner.token, { name: 'Warehouse' })).json() as OwnerSite;
    expect((await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${frontDoor}/site`, sandbox.owner.token, { siteId })).statusCode).toBe(204);
    expect((await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${garage}/site`, sandbox.owner.token, { siteId: second.id })).statusCode).toBe(204);
    expect((await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${garage}/site`, sandbox.owner.token, { siteId })).statusCode).toBe(204);
    const renamed = await call('PUT', owner(`/${second.id}`), sandbox.owner.token, { name: 'Depot' });
    expect(renamed.json()).toMatchObject({ name: 'Depot', lockIds: [] });
    const list = (await call('GET', owner(), sandbox.owner.token)).json() as OwnerSite[];
    expect(list.map((s) => [s.name, s.lockIds.sort()])).toEqual([
      ['Head Office', [frontDoor, garage].sort()],
      ['Depot', []],
    ]);
    expect((await call('DELETE', owner(`/${second.id}`), sandbox.owner.token)).statusCode).toBe(204);
    expect((await call('PUT', `/platform/application/${sandbox.applicationId}/lock/${garage}/site`, sandbox.owner.token, { siteId: null })).statusCode).toBe(204);
  });

  it('refuses bad input with a clear 4xx and changes nothing', async () => {
    const before = (await call('GET', owner(), sandbox.owner.token)).body;
    expect((await call('POST', owner(), sandbox.owner.token, { name: 'head office' })).json()).toEqual({ code: 409, message: siteErrors.nameTaken });
    expect((await call('POST', owner(), sandbox.owner.token, { name: '' })).statusCode).toBe(400);
    expect((await call('POST', owner(), sandbox.owner.token, { name: 'x'.repeat(MAX_TEXT_LENGTH + 1) })).statusCode).toBe(400);
    expect((await call('PUT', owner(`/${randomUUID()}`), sandbox.owner.token, { name: 'Nowhere' })).json()).toEqual({ code: 404, message: siteErrors.siteNotFound });
    expect((await call('PUT', owner('/not-a-uuid'), sandbox.owner.token, { name: 'Nowhere' })).statusCode).toBe(404);
    expect((await call('DELETE', owner(`/${randomUUID()}`), sandbox.owner.token)).statusCode).toBe(404);
    const lockSite = `/platform/application/${sandbox.applicationId}/lock/${garage}/site`;
    expect((await call('PUT', lockSite, sandbox.owner.token, { siteId: randomUUID() })).statusCode).toBe(404);
    expect((await call('PUT', lockSite, sandbox.owner.token, { siteId: 'x' })).statusCode).toBe(400);
    expect((await call('PUT', lockSite, sandbox.owner.token, {})).statusCode).toBe(400);
    // Another application's site, and another application's owner: 404.
    const foreign = (await call('POST', `/platform/application/${other.applicationId}/site`, other.owner.token, { name: 'Elsewhere' })).json() as OwnerSite;
    expect((await call('PUT', lockSite, sandbox.owner.token, { siteId: foreign.id })).statusCode).toBe(404);
    expect((await call('GET', owner(), other.owner.token)).statusCode).toBe(404);
    expect((await call('GET', owner(), sandbox.owner.token)).body).toBe(before);
  });
});

describe('the headless SDK (SitesClient.kt)', () => {
  it('listSites: the sites of the caller’s locks, in NetworkSiteResponse’s shape (no nulls)', async () => {
    const asUser = (await call('GET', '/site', userToken)).json() as Site[];
    expect(asUser).toEqual([
      {
        id: siteId,
        name: 'Head Office',
        colour: expect.stringMatching(/^#/),
        longitude: 0,
        latitude: 0,
        radius: 0,
        passBackground: expect.any(String),
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    expect(((await call('GET', '/site', sandbox.owner.token)).json() as Site[]).map((s) => s.id)).toEqual([siteId]);
    // Another application's users and owners see none of it.
    expect((await call('GET', '/site', await appUserToken(other, 'outsider'))).json()).toEqual([]);
    expect((await call('GET', '/site', other.owner.token)).body).not.toContain(siteId);
  });

  it('getLocksForSite: the site’s locks the caller may use', async () => {
    const asUser = (await call('GET', `/site/${siteId}/device`, userToken)).json() as DeviceLock[];
    expect(asUser.map((l) => [l.id, l.role])).toEqual([[frontDoor, 'USER']]);
    const asOwner = (await call('GET', `/site/${siteId}/device`, sandbox.owner.token)).json() as DeviceLock[];
    expect(asOwner.map((l) => l.id)).toEqual([frontDoor]);
    expect((await call('GET', `/site/${siteId}/device`, other.owner.token)).json()).toEqual({ code: 404, message: siteErrors.siteNotFound });
    expect((await call('GET', `/site/${randomUUID()}/device`, userToken)).statusCode).toBe(404);
    expect((await call('GET', '/site/nope/device', userToken)).statusCode).toBe(404);
  });

  it('getUsersForSite: users of the locks the caller administers (an admin, the owner); a plain user gets none', async () => {
    const asAdmin = (await call('GET', `/site/${siteId}/user`, adminToken)).json() as SiteUser[];
    expect(asAdmin.map((u) => u.userId).sort()).toEqual([userId, adminId].sort());
    expect(asAdmin[0]).toEqual({ userId: expect.any(String), email: expect.stringMatching(/@example\.com$/), displayName: expect.any(String), orphan: false });
    expect(((await call('GET', `/site/${siteId}/user`, sandbox.owner.token)).json() as SiteUser[]).length).toBe(2);
    expect((await call('GET', `/site/${siteId}/user`, userToken)).json()).toEqual([]);
    expect((await call('GET', `/site/${siteId}/user`, await appUserToken(other, 'outsider'))).statusCode).toBe(404);
  });
});
