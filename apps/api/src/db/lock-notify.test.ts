import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, eventually, type TestApp } from '../../test/helpers.js';
import { applications, applicationUsers, lockActivity, locks, lockShares } from './schema.js';

/** The sandbox's change notices (migration 0003): one per changed row, naming application, lock and what. */
describe('lock change notices', () => {
  let t: TestApp;
  const seen: string[] = [];
  let stop: () => Promise<void>;
  beforeAll(async () => {
    t = await createTestApp();
    stop = await t.database.listen('latchkey_locks', { message: (p) => seen.push(p), up: () => {}, down: () => {} });
  });
  afterAll(async () => {
    await stop();
    await t.close();
  });

  it('announces a lock, its shares and its activity', async () => {
    const db = t.app.db;
    const [app] = await db.insert(applications).values({ name: 'A', companyName: 'C', mailingAddress: 'M' }).returning();
    const [lock] = await db.insert(locks).values({ applicationId: app!.id, name: 'Front Door' }).returning();
    const [user] = await db.insert(applicationUsers).values({ applicationId: app!.id, sub: 's1', status: 'active' }).returning();
    await db.insert(lockShares).values({ lockId: lock!.id, userId: user!.id });
    const [entry] = await db.insert(lockActivity).values({ lockId: lock!.id, applicationId: app!.id, type: 'UNLOCK' }).returning();
    await db.update(locks).set({ unlockedUntil: new Date() }).where(eq(locks.id, lock!.id));
    const expected = [
      `${app!.id} ${lock!.id} lock`,
      `${app!.id} ${lock!.id} share ${user!.id}`,
      `${app!.id} ${lock!.id} activity ${entry!.id}`,
    ];
    expect(await eventually(() => expected.every((e) => seen.includes(e)) && seen.filter((s) => s.endsWith(' lock')).length >= 2)).toBe(true);
  });
});
