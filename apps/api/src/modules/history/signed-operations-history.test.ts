import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * Shares and lock settings changed by a lock admin's signed operation (not through the portal)
 * are in the application's history too, with that admin as the actor.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let admin: KeyHolder;
let dave: KeyHolder;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { name: 'Side Door', unlockTime: 5 });
  admin = await certify(t, await appUserToken(sandbox, 'admin', 'admin@example.com'));
  dave = await certify(t, await appUserToken(sandbox, 'dave', 'dave@example.com'));
  await share(t, lockId, admin.userId, { role: 'ADMIN' });
});
afterAll(() => t?.close());

const run = (operation: unknown) => execute(t, lockId, admin.token, signOperation(admin, lockId, operation));
async function newest(): Promise<HistoryEntry> {
  const res = await t.app.inject({ url: `/api/platform/application/${sandbox.applicationId}/history`, headers: bearer(sandbox.owner.token) });
  expect(res.statusCode).toBe(200);
  return res.json().items[0];
}

describe('history of signed operations', () => {
  it('records ADD_USER, MUTATE_SETTING and REMOVE_USER with the lock admin as actor', async () => {
    expect((await run({ type: 'ADD_USER', user: dave.userId, role: 'USER' })).statusCode).toBe(204);
    expect(await newest()).toMatchObject({
      kind: 'share',
      subject: 'dave@example.com · Side Door',
      actor: { userId: admin.userId, email: 'admin@example.com' },
      changes: [{ field: 'role', before: null, after: 'USER' }],
    });

    expect((await run({ type: 'MUTATE_SETTING', unlockDuration: 12 })).statusCode).toBe(204);
    expect(await newest()).toMatchObject({ kind: 'lock_settings', subject: 'Side Door', changes: [{ field: 'settings.unlockTime', before: 5, after: 12 }] });

    expect((await run({ type: 'REMOVE_USER', users: [dave.userId] })).statusCode).toBe(204);
    expect(await newest()).toMatchObject({ kind: 'share', changes: [{ field: 'role', before: 'USER', after: null }] });
  });

  it('a refused operation records nothing', async () => {
    const before = await newest();
    const res = await run({ type: 'REMOVE_USER', users: [dave.userId] });
    expect(res.statusCode).toBe(404);
    expect((await newest()).id).toBe(before.id);
  });
});
