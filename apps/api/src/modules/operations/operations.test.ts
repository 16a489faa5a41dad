import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { lockShares, locks } from '../../db/schema.js';
import { operationErrors, type DeviceLock } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import {
  activityCount,
  appUserToken,
  certify,
  createLock,
  createSandbox,
  execute,
  lockRow,
  logOf,
  share,
  signOperation,
  type KeyHolder,
  type Sandbox,
} from '../../../test/fixtures/operations.js';

/** Signed MUTATE_LOCK operations, accepted, logged, and single-use across instances. */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let alice: KeyHolder;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 5 });
  alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
  await share(t, lockId, alice.userId);
});
afterAll(() => t?.close());

const secondsUntilRelock = async () => ((await lockRow(t, lockId)).unlockedUntil!.getTime() - Date.now()) / 1000;

describe('MUTATE_LOCK', () => {
  it('unlocks for the lock time when no duration is given, and logs who did it', async () => {
    const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
    expect(res.statusCode, res.body).toBe(204);
    expect(await secondsUntilRelock()).toBeGreaterThan(3.5);
    expect(await secondsUntilRelock()).toBeLessThanOrEqual(5);
    const [entry] = await logOf(t, sandbox, lockId);
    expect(entry).toMatchObject({ type: 'UNLOCK', rejected: false, reason: null, subject: '5 s', actor: { userId: alice.userId, email: 'alice@example.com', displayName: 'User alice' } });

    const device = (await t.app.inject({ method: 'GET', url: `/api/device/${lockId}`, headers: bearer(alice.token) })).json() as DeviceLock;
    expect(device.state.locked).toBe(false);
    expect(device.state.unlockedUntil).toBeGreaterThan(Date.now());
  });

  it('keeps a requested duration, and locks again on locked: true', async () => {
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, { ...UNLOCK, duration: 30 }))).statusCode).toBe(204);
    expect(await secondsUntilRelock()).toBeGreaterThan(28);
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: true }))).statusCode).toBe(204);
    expect((await lockRow(t, lockId)).unlockedUntil).toBeNull();
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'LOCK', rejected: false });
  });

  it('lets an owner of the application unlock without a share, with their portal token', async () => {
    const owner = await certify(t, sandbox.owner.token);
    expect((await execute(t, lockId, owner.token, signOperation(owner, lockId, UNLOCK))).statusCode).toBe(204);
    expect((await logOf(t, sandbox, lockId))[0]!.actor.userId).toBe(sandbox.owner.userId);
  });

  it('refuses a second use of the same operation with 409, and logs it', async () => {
    const jws = signOperation(alice, lockId, UNLOCK, { jti: 'door-1' });
    expect((await execute(t, lockId, alice.token, jws)).statusCode).toBe(204);
    const before = await lockRow(t, lockId);
    const again = await execute(t, lockId, alice.token, jws);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ code: 409, message: operationErrors.replayed });
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'UNLOCK', rejected: true, reason: operationErrors.replayed });
    expect((await lockRow(t, lockId)).unlockedUntil).toEqual(before.unlockedUntil);
  });

  it('accepts the same jti from another user: ids are per issuer', async () => {
    const bob = await certify(t, await appUserToken(sandbox, 'bob'));
    await share(t, lockId, bob.userId);
    expect((await execute(t, lockId, bob.token, signOperation(bob, lockId, UNLOCK, { jti: 'door-1' }))).statusCode).toBe(204);
  });

  it('takes an old client: standard base64, application/json, no jti; its signature is then single-use', async () => {
    const jws = signOperation(alice, lockId, UNLOCK, { jti: null, encoding: 'base64' });
    expect(jws).toMatch(/[+/=]/);
    expect((await execute(t, lockId, alice.token, jws, 'application/json')).statusCode).toBe(204);
    expect((await execute(t, lockId, alice.token, jws, 'application/json')).statusCode).toBe(409);
    expect((await execute(t, lockId, alice.token, jws)).statusCode).toBe(409);
  });

  it('takes the JWS as a JSON string too', async () => {
    const res = await execute(t, lockId, alice.token, JSON.stringify(signOperation(alice, lockId, UNLOCK)), 'application/json');
    expect(res.statusCode, res.body).toBe(204);
  });

  it('refuses any other content type with 415 and logs nothing', async () => {
    const before = await activityCount(t, lockId);
    const res = await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK), 'text/plain');
    expect(res.statusCode).toBe(415);
    expect(await activityCount(t, lockId)).toBe(before);
    expect(res.json()).toMatchObject({ code: 415 });
  });
});

describe('operations arriving together', () => {
  it('commit together, each accepted once and logged once, a repeated one refused', async () => {
    // Accepted unlocks, and the refusals the replayed entries stand for (an identical refusal within a
    // minute counts on the entry already there, which an earlier test's replay may have written).
    const counts = async () =>
      (
        await t.database.executeSql(
          `select count(*) filter (where not rejected and type = 'UNLOCK')::int as accepted,
             coalesce(sum(repeats) filter (where rejected and reason = $2), 0)::int as replays, count(*)::int as entries
           from lock_activity where lock_id = $1`,
          [lockId, operationErrors.replayed],
        )
      ).rows[0] as { accepted: number; replays: number; entries: number };
    const before = await counts();
    const unique = Array.from({ length: 40 }, () => signOperation(alice, lockId, UNLOCK));
    const results = await Promise.all([...unique, unique[0]!, unique[1]!].map((jws) => execute(t, lockId, alice.token, jws)));
    expect(results.filter((r) => r.statusCode === 204)).toHaveLength(40);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(2);
    const after = await counts();
    expect(after.accepted - before.accepted).toBe(40);
    expect(after.replays - before.replays).toBe(2);
    // The two replays are the same refusal (caller, lock, reason): at most one new entry for both.
    expect(after.entries - before.entries).toBeLessThanOrEqual(41);
    expect((await logOf(t, sandbox, lockId)).filter((e) => e.rejected && e.reason === operationErrors.replayed)).toHaveLength(1);
  });
});

describe('across instances', () => {
  it('spends an operation id once, whichever instance sees it first', async () => {
    const other = await t.secondInstance();
    try {
      const jws = signOperation(alice, lockId, UNLOCK);
      expect((await execute(t, lockId, alice.token, jws)).statusCode).toBe(204);
      expect((await execute(other as TestApp, lockId, alice.token, jws)).statusCode).toBe(409);

      // The second instance now holds alice's standing; a revoke elsewhere must still stop her at once.
      const carol = await certify(t, await appUserToken(sandbox, 'carol'));
      await share(t, lockId, carol.userId);
      expect((await execute(other as TestApp, lockId, carol.token, signOperation(carol, lockId, UNLOCK))).statusCode).toBe(204);
      await t.database.db.delete(lockShares).where(and(eq(lockShares.lockId, lockId), eq(lockShares.userId, carol.userId)));
      const revoked = await execute(other as TestApp, lockId, carol.token, signOperation(carol, lockId, UNLOCK));
      expect(revoked.statusCode).toBe(403);
      expect(revoked.json().message).toBe(operationErrors.noAccess);
      // So must new rules on the lock.
      await t.database.db.update(locks).set({ usageRequirements: { location: { latitude: 0, longitude: 0, radius: 10, accuracy: 'FINE', enabled: true } } }).where(eq(locks.id, lockId));
      const ruled = await execute(other as TestApp, lockId, alice.token, signOperation(alice, lockId, UNLOCK));
      expect(ruled.json().message).toBe(operationErrors.locationRequired);
      await t.database.db.update(locks).set({ usageRequirements: {} }).where(eq(locks.id, lockId));

      const racing = signOperation(alice, lockId, UNLOCK);
      const results = await Promise.all([execute(t, lockId, alice.token, racing), execute(other as TestApp, lockId, alice.token, racing), execute(t, lockId, alice.token, racing)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([204, 409, 409]);
    } finally {
      await other.close();
    }
  });
});
