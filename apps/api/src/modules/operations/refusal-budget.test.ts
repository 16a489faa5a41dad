import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors, operationErrors, type WebhookPayload } from '@latchkey/contract';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { startReceiver } from '../../../test/fixtures/webhook-receiver.js';
import { appUserToken, certify, createLock, createSandbox, share, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * A refused operation costs its caller, not the application: any user of an application, even one with no
 * share, could once send badly signed operations to any of its locks, each writing a refused log entry and
 * a webhook delivery. Now a refusal
 * is charged to its caller (a budget of its own, per lock user and per address: beyond it, 429 and
 * nothing written), and the same refusal again within a minute counts on the entry already written (one
 * entry, one delivery).
 */
const REFUSED_MAX = 10;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
let t: TestApp;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let lockIds: string[];

beforeAll(async () => {
  t = await createTestApp({ REFUSED_OPERATION_RATE_LIMIT_MAX: String(REFUSED_MAX), OUTBOUND_ALLOW: '127.0.0.1' });
  sandbox = await createSandbox(t);
  lockIds = [];
  for (let i = 0; i < 12; i++) lockIds.push(await createLock(t, sandbox.applicationId, { name: `Door ${i}` }));
  receiver = await startReceiver();
  const hook = await t.app.inject({
    method: 'POST',
    url: `/api/platform/application/${sandbox.applicationId}/webhook`,
    headers: bearer(sandbox.owner.token),
    payload: { url: receiver.url, events: ['lock.unlock_refused'] },
  });
  expect(hook.statusCode, hook.body).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

let userCount = 0;
const newUser = async (): Promise<KeyHolder> => certify(t, await appUserToken(sandbox, `refuser-${++userCount}`));
/** From its own address unless told, so the per-address budget is not what a test meets. */
const send = (holder: KeyHolder, lockId: string, jws: string, remoteAddress = `10.0.${userCount}.${Math.floor(Math.random() * 250) + 1}`) =>
  t.app.inject({ method: 'POST', url: `/api/device/${lockId}/execute`, headers: { ...bearer(holder.token), 'content-type': 'application/jwt' }, payload: jws, remoteAddress });
const entriesOf = async (userId: string) =>
  (await t.database.executeSql(`select lock_id as "lockId", reason, repeats from lock_activity where actor_user_id = $1 and rejected order by seq`, [userId])).rows as {
    lockId: string;
    reason: string;
    repeats: number;
  }[];
const deliveriesFor = (userId: string) =>
  receiver.received.map((r) => JSON.parse(r.body) as WebhookPayload<{ userId: string; reason: string }>).filter((b) => b.data.userId === userId);
/** Waits for the relay and the workers to have sent whatever they owe: no delivery of the application is left to send. */
const settle = async () => {
  const owed = `select 1 from webhook_deliveries where application_id = $1 and status in ('pending', 'retrying')`;
  expect(await eventually(async () => (await t.database.executeSql(owed, [sandbox.applicationId])).rows.length === 0)).toBe(true);
};

describe('the refusal budget', () => {
  it('refuses the caller with 429 once it has used up its refused operations; the excess writes nothing and announces nothing', async () => {
    const mallory = await newUser();
    const address = '10.9.9.9';
    const answers: number[] = [];
    // Distinct locks, so no refusal is a repeat of another: each would be an entry and a delivery.
    for (const lockId of lockIds) answers.push((await send(mallory, lockId, 'not-a-jws', address)).statusCode);
    expect(answers).toEqual([...Array<number>(REFUSED_MAX).fill(400), ...Array<number>(lockIds.length - REFUSED_MAX).fill(429)]);
    const over = await send(mallory, lockIds[0]!, 'still-not-a-jws', address);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({ code: 429, message: apiErrors.tooManyAttempts });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);

    expect(await entriesOf(mallory.userId)).toHaveLength(REFUSED_MAX);
    await settle();
    expect(deliveriesFor(mallory.userId)).toHaveLength(REFUSED_MAX);

    // Only refusals are charged: the same caller's good operation still goes through.
    await share(t, lockIds[0]!, mallory.userId);
    expect((await send(mallory, lockIds[0]!, signOperation(mallory, lockIds[0]!, UNLOCK), address)).statusCode).toBe(204);
    // And another user has a budget of its own.
    const bob = await newUser();
    expect((await send(bob, lockIds[0]!, 'not-a-jws')).statusCode).toBe(400);
  });

  it('counts refusals per address too: many users behind one address share five times the budget', async () => {
    const address = '10.7.7.7';
    const statuses: number[] = [];
    for (let u = 0; u < 6; u++) {
      const user = await newUser();
      for (let i = 0; i < REFUSED_MAX; i++) statuses.push((await send(user, lockIds[i]!, 'not-a-jws', address)).statusCode);
    }
    expect(statuses.filter((s) => s === 400)).toHaveLength(5 * REFUSED_MAX);
    expect(statuses.slice(5 * REFUSED_MAX)).toEqual(Array<number>(REFUSED_MAX).fill(429));
  });
});

describe('repeated refusals', () => {
  it('the same refusal again within a minute (caller, lock, reason) is one log entry with its count and one delivery', async () => {
    const eve = await newUser();
    const lockId = lockIds[1]!;
    // Sequentially, then several at once (on PostgreSQL truly concurrent).
    for (let i = 0; i < 3; i++) expect((await send(eve, lockId, 'not-a-jws')).statusCode).toBe(400);
    const together = await Promise.all([0, 1].map(() => send(eve, lockId, 'not-a-jws')));
    expect(together.map((r) => r.statusCode)).toEqual([400, 400]);
    expect(await entriesOf(eve.userId)).toEqual([{ lockId, reason: operationErrors.malformed, repeats: 5 }]);

    // Another reason, or another lock, is another entry.
    const wrongKind = signOperation(eve, lockId, { type: 'SELF_DESTRUCT' });
    expect((await send(eve, lockId, wrongKind)).statusCode).toBe(400);
    expect((await send(eve, lockIds[2]!, 'not-a-jws')).statusCode).toBe(400);
    expect(await entriesOf(eve.userId)).toHaveLength(3);

    await settle();
    const delivered = deliveriesFor(eve.userId);
    expect(delivered).toHaveLength(3);
    expect(delivered.filter((d) => d.data.reason === operationErrors.malformed)).toHaveLength(2);

    // Once the entry is older than the window, the same refusal is logged and announced anew.
    await t.database.executeSql(`update lock_activity set at = at - interval '61 seconds' where actor_user_id = $1`, [eve.userId]);
    expect((await send(eve, lockId, 'not-a-jws')).statusCode).toBe(400);
    expect((await entriesOf(eve.userId)).filter((e) => e.lockId === lockId && e.reason === operationErrors.malformed).map((e) => e.repeats)).toEqual([5, 1]);
    expect(await eventually(() => deliveriesFor(eve.userId).length === 4, 5000)).toBe(true);
  });

  it('the lock log shows the entry once', async () => {
    const res = await t.app.inject({ url: `/api/platform/application/${sandbox.applicationId}/lock/${lockIds[3]!}/log`, headers: bearer(sandbox.owner.token) });
    const before = (res.json() as { items: unknown[] }).items.length;
    const frank = await newUser();
    for (let i = 0; i < 4; i++) await send(frank, lockIds[3]!, 'not-a-jws');
    const after = await t.app.inject({ url: `/api/platform/application/${sandbox.applicationId}/lock/${lockIds[3]!}/log`, headers: bearer(sandbox.owner.token) });
    expect((after.json() as { items: unknown[] }).items.length).toBe(before + 1);
  });
});
