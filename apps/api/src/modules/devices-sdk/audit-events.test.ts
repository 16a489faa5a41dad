import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS, type SdkAuditEntry } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, share, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * The headless SDK's audit list (`Accept: …api-v2+json`) names entries by its AuditEvent enum, which it
 * decodes strictly: a door's sensor maps to DOOR_OPEN / DOOR_CLOSE; what the enum has no name for (battery,
 * alarms, a keypad lockout, an audit gap) is left out rather than sent under a name the SDK would fail on.
 */
let t: TestApp;
let sandbox: Sandbox;
const V2 = { accept: 'application/vnd.doordeck.api-v2+json' };
/** The AuditEvent names of the headless SDK's enum. */
const SDK_AUDIT_EVENT = ['DOOR_OPEN', 'DOOR_CLOSE', 'DOOR_UNLOCK', 'DOOR_LOCK', 'OWNER_ASSIGNED', 'DEVICE_CONNECTED', 'DEVICE_DISCONNECTED', 'LOCK_SHARED', 'LOCK_REVOKED', 'USER_PROMOTED', 'USER_DEMOTED', 'SETTING_CHANGED', 'TILE_ASSOCIATED', 'TILE_DISASSOCIATED', 'DEVICE_DECOMMISSIONED'];

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
});
afterAll(async () => {
  await t?.close();
});

describe('the SDK’s audit list and the door’s events', () => {
  it('every name it sends is one of the SDK’s AuditEvent enum', () => {
    for (const name of Object.values(AUDIT_EVENTS)) if (name !== null) expect(SDK_AUDIT_EVENT).toContain(name);
  });

  it('door sensor entries as DOOR_OPEN / DOOR_CLOSE; battery and alarms left out', async () => {
    const lockId = await createLock(t, sandbox.applicationId);
    const admin = await certify(t, await appUserToken(sandbox, 'audit-admin'));
    await share(t, lockId, admin.userId, { role: 'ADMIN' });
    const simulate = (kind: string, payload?: object) =>
      t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/${kind}`, headers: bearer(sandbox.owner.token), ...(payload ? { payload } : {}) });
    for (const [kind, body] of [['door_opened'], ['battery', { value: 5 }], ['jammed'], ['tampered'], ['door_closed']] as const) expect((await simulate(kind, body)).statusCode).toBe(204);
    const res = await t.app.inject({ url: `/api/device/${lockId}/log`, headers: { ...bearer(admin.token), ...V2 } });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as SdkAuditEntry[]).map((e) => e.type)).toEqual(['DOOR_CLOSE', 'DOOR_OPEN']);
  });
});
