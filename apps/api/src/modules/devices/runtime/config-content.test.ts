import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { accessCodes, applicationUsers, lockDevices } from '../../../db/schema.js';
import { SecretBox } from '../../../lib/secret-box.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { createLock, createSandbox, share, type Sandbox } from '../../../../test/fixtures/operations.js';
import { withoutCodeHashes } from '../../access-codes/access-codes.service.js';
import { deviceConfigs, lockConfigContent } from './config-content.js';

/**
 * Locks read together: each gets the config it gets read alone (its own shares and codes, its own
 * application's owners), and the reads take one statement per input whatever the number of locks.
 */
let t: TestApp;
let a: Sandbox;
let b: Sandbox;
const box = new SecretBox(undefined);
const ids = {} as Record<'a1' | 'a2' | 'a3' | 'b1' | 'u1' | 'u2' | 'u3' | 'online' | 'withdrawnOffline', string>;
const hour = 3600_000;

const appUser = async (applicationId: string) =>
  (await t.database.db.insert(applicationUsers).values({ applicationId, sub: randomUUID(), status: 'active' }).returning())[0]!.id;
const code = async (lockId: string, applicationId: string, values: Partial<typeof accessCodes.$inferInsert>) =>
  (await t.database.db.insert(accessCodes).values({ lockId, applicationId, name: 'Code', kind: 'online', sealedCode: '123456', ...values }).returning())[0]!.id;

beforeAll(async () => {
  t = await createTestApp();
  [a, b] = [await createSandbox(t), await createSandbox(t)];
  ids.a1 = await createLock(t, a.applicationId, { unlockTime: 5 });
  ids.a2 = await createLock(t, a.applicationId, { unlockTime: 9 });
  ids.a3 = await createLock(t, a.applicationId);
  ids.b1 = await createLock(t, b.applicationId, { offlineGraceSeconds: 3600 });
  ids.u1 = await appUser(a.applicationId);
  ids.u2 = await appUser(a.applicationId);
  ids.u3 = await appUser(b.applicationId);
  await share(t, ids.a1, ids.u1, { role: 'ADMIN', startsAt: new Date(Date.now() - hour) });
  await share(t, ids.a1, ids.u2, { endsAt: new Date(Date.now() - hour) });
  await share(t, ids.b1, ids.u3);
  ids.online = await code(ids.a1, a.applicationId, {});
  ids.withdrawnOffline = await code(ids.a1, a.applicationId, { kind: 'offline', withdrawnAt: new Date(), endsAt: new Date(Date.now() + hour) });
  await code(ids.a1, a.applicationId, { kind: 'offline' });
  await code(ids.a1, a.applicationId, { withdrawnAt: new Date() });
  await code(ids.b1, b.applicationId, { endsAt: new Date(Date.now() - hour) });
  await t.database.db.insert(lockDevices).values([
    { lockId: ids.a1, provisionedAt: new Date(), configHash: 'a1-hash' },
    { lockId: ids.a2, provisionedAt: new Date() },
    { lockId: ids.b1, provisionedAt: new Date() },
    // Not yet provisioned: no device to send a config to.
    { lockId: ids.a3, codeHash: 'pending' },
  ]);
});
afterAll(() => t?.close());

const sqlText = (query: unknown) => (t.database.db as unknown as { dialect: { sqlToQuery(q: SQL): { sql: string } } }).dialect.sqlToQuery(query as SQL).sql;

describe('configs of locks read together', () => {
  it('are each the one the lock gets read alone, with its own users and codes; a lock without a provisioned device is left out', async () => {
    const read = await deviceConfigs(t.database.db, [ids.a1, ids.a2, ids.a3, ids.b1, randomUUID()], box);
    expect([...read.keys()].sort()).toEqual([ids.a1, ids.a2, ids.b1].sort());
    for (const lockId of [ids.a1, ids.a2, ids.b1]) {
      expect(withoutCodeHashes(read.get(lockId)!.content), lockId).toEqual(withoutCodeHashes((await lockConfigContent(t.database.db, lockId, box))!));
    }
    expect(read.get(ids.a1)).toMatchObject({ deviceId: expect.any(String), configHash: 'a1-hash' });
    expect(read.get(ids.a2)!.configHash).toBeNull();

    const a1 = read.get(ids.a1)!.content;
    expect(a1.unlockTime).toBe(5);
    expect(a1.users.map((user) => [user.userId, user.role])).toEqual([
      [a.owner.userId, 'ADMIN'],
      [ids.u1, 'ADMIN'],
    ]);
    expect(a1.accessCodes?.map((c) => c.accessCodeId)).toEqual([ids.online]);
    expect(a1.withdrawnOfflineCodes?.map((c) => c.accessCodeId)).toEqual([ids.withdrawnOffline]);
    expect(a1.accessCodeSalt).toEqual(expect.any(String));

    const a2 = read.get(ids.a2)!.content;
    expect(a2).toEqual({ unlockTime: 9, usageRequirements: {}, users: [expect.objectContaining({ userId: a.owner.userId, role: 'ADMIN' })], offlineGraceSeconds: expect.any(Number) });

    const b1 = read.get(ids.b1)!.content;
    expect(b1.users.map((user) => [user.userId, user.role])).toEqual([
      [b.owner.userId, 'ADMIN'],
      [ids.u3, 'USER'],
    ]);
    expect(b1.offlineGraceSeconds).toBe(3600);
    expect(b1).not.toHaveProperty('accessCodes');
  });

  it('take the same statements for many locks as for one', async () => {
    const statements = vi.spyOn(t.database.db, 'execute');
    const selects = vi.spyOn(t.database.db, 'select');
    try {
      await deviceConfigs(t.database.db, [ids.a1], box);
      const one = statements.mock.calls.length + selects.mock.calls.length;
      statements.mockClear();
      selects.mockClear();
      await deviceConfigs(t.database.db, [ids.a1, ids.a2, ids.a3, ids.b1], box);
      expect(statements.mock.calls.length + selects.mock.calls.length).toBe(one);
      expect(statements.mock.calls.filter(([query]) => sqlText(query).includes('lock_shares'))).toHaveLength(1);
    } finally {
      statements.mockRestore();
      selects.mockRestore();
    }
  });

  it('of a lock that is gone is none', async () => {
    expect(await lockConfigContent(t.database.db, randomUUID(), box)).toBeNull();
    expect((await deviceConfigs(t.database.db, [], box)).size).toBe(0);
  });
});
