import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextDeliveryCursor, outboundErrors, REDACTED, WEBHOOK_DELIVERY_PAGE_SIZE, webhookErrors, type WebhookDelivery, type WebhookPayload, type WebhookWithSecret } from '@latchkey/contract';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';
import { startReceiver, verifySignature, type Answer, type Received } from '../../../test/fixtures/webhook-receiver.js';
import { DELIVERY_RETENTION_DAYS } from './delivery.js';

/**
 * Webhooks registered per application, delivered signed (Standard Webhooks), retried with
 * exponential backoff, logged, resendable. A real HTTP receiver in the test checks every signature.
 */
let t: TestApp;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let lockId: string;
const RETRY_DELAY_S = 1;
const RETRY_LIMIT = 2;

// The application the tests share unless one passes its own (`s`).
const base = (s = sandbox) => `/api/platform/application/${s.applicationId}`;
const owner = (s = sandbox) => bearer(s.owner.token);

async function register(events: string[], url = receiver.url, s = sandbox): Promise<WebhookWithSecret> {
  const res = await t.app.inject({ method: 'POST', url: `${base(s)}/webhook`, headers: owner(s), payload: { url, events } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
async function deliveries(webhookId: string, s = sandbox): Promise<WebhookDelivery[]> {
  const res = await t.app.inject({ url: `${base(s)}/webhook/${webhookId}/delivery`, headers: owner(s) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
async function remove(webhookId: string, s = sandbox) {
  expect((await t.app.inject({ method: 'DELETE', url: `${base(s)}/webhook/${webhookId}`, headers: owner(s) })).statusCode).toBe(204);
}
const rename = (name: string, s = sandbox) => t.app.inject({ method: 'POST', url: base(s), headers: owner(s), payload: { name } });
const bodyOf = (r: Received) => JSON.parse(r.body) as WebhookPayload<Record<string, unknown>>;
const answering = (answer: (r: Received, n: number) => Answer) => receiver.setAnswer(answer);

beforeAll(async () => {
  t = await createTestApp({
    // hooks.example.test: a host by name the guard takes without resolving it (a URL's host case).
    OUTBOUND_ALLOW: '127.0.0.1,hooks.example.test',
    WEBHOOK_RETRY_DELAY_SECONDS: String(RETRY_DELAY_S),
    WEBHOOK_RETRY_LIMIT: String(RETRY_LIMIT),
    WEBHOOK_TIMEOUT_SECONDS: '2',
  });
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId);
  receiver = await startReceiver();
});
const ownReceivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  for (const r of ownReceivers) await r.close();
});

/** An application and a receiver of the test's own, for a test that runs beside others. */
async function ownEndpoint(): Promise<{ s: Sandbox; r: Awaited<ReturnType<typeof startReceiver>> }> {
  const r = await startReceiver();
  ownReceivers.push(r);
  return { s: await createSandbox(t), r };
}

describe('registering', () => {
  it('answers 201 with the whsec_ secret once; the list never shows it; the history redacts it', async () => {
    const hook = await register(['application.updated']);
    expect(hook).toMatchObject({ id: expect.any(String), url: receiver.url, events: ['application.updated'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const list = await t.app.inject({ url: `${base()}/webhook`, headers: owner() });
    expect(list.json()).toEqual([{ id: hook.id, url: receiver.url, events: ['application.updated'], createdAt: expect.any(Number) }]);
    expect(list.body).not.toContain(hook.secret.slice(6, 20));
    const history = await t.app.inject({ url: `${base()}/history?kind=webhook`, headers: owner() });
    expect(history.body).not.toContain(hook.secret.slice(6, 20));
    expect(history.json().items[0].changes).toContainEqual({ field: 'secret', before: null, after: REDACTED });
    await remove(hook.id);
  });

  it.each([
    ['plain http to a host not allowed', 'http://example.com/hooks', 400, outboundErrors.notHttps],
    ['a private address', 'https://10.0.0.7/hooks', 400, outboundErrors.privateAddress],
    ['loopback by name', 'https://localhost/hooks', 400, outboundErrors.privateAddress],
    ['cloud metadata', 'https://169.254.169.254/latest', 400, outboundErrors.privateAddress],
    ['credentials in the URL', 'https://user:pw@example.com/hooks', 400, outboundErrors.credentials],
    ['not a URL', 'hooks here', 400, outboundErrors.invalidUrl],
  ])('refuses %s with a clear 4xx, storing nothing', async (_label, url, status, message) => {
    const res = await t.app.inject({ method: 'POST', url: `${base()}/webhook`, headers: owner(), payload: { url, events: ['share.added'] } });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().message).toContain(message);
    expect((await t.app.inject({ url: `${base()}/webhook`, headers: owner() })).json()).toEqual([]);
  });

  it('refuses a URL the application already has an endpoint for (409), as normalised, storing nothing; paths, queries and other applications are not duplicates', async () => {
    const post = (url: string, applicationId = sandbox.applicationId, token = sandbox.owner.token) =>
      t.app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/webhook`, headers: bearer(token), payload: { url, events: ['share.added'] } });
    const list = async () => (await t.app.inject({ url: `${base()}/webhook`, headers: owner() })).json() as { id: string; url: string }[];
    const webhookHistory = async () => (await t.app.inject({ url: `${base()}/history?kind=webhook`, headers: owner() })).json().items.length as number;

    const first = await post('https://hooks.example.test/latchkey');
    expect(first.statusCode, first.body).toBe(201);
    const entries = await webhookHistory();
    // The same URL, and the same one with its host in another case (the guard's URL lower-cases it).
    for (const url of ['https://hooks.example.test/latchkey', 'https://Hooks.EXAMPLE.test/latchkey', ' https://hooks.example.test/latchkey ']) {
      const again = await post(url);
      expect(again.statusCode, url).toBe(409);
      expect(again.json()).toEqual({ code: 409, message: webhookErrors.urlExists });
    }
    expect((await list()).map((w) => w.url)).toEqual(['https://hooks.example.test/latchkey']);
    expect(await webhookHistory()).toBe(entries);

    // Another path or query string is another endpoint; another application may use the same URL.
    const path = await post('https://hooks.example.test/latchkey/2');
    const query = await post('https://hooks.example.test/latchkey?app=2');
    expect([path.statusCode, query.statusCode]).toEqual([201, 201]);
    const other = await createSandbox(t);
    const elsewhere = await post('https://hooks.example.test/latchkey', other.applicationId, other.owner.token);
    expect(elsewhere.statusCode, elsewhere.body).toBe(201);

    // Two adds of one new URL at once: exactly one is registered.
    const racing = await Promise.all([post('https://hooks.example.test/racing'), post('https://HOOKS.example.test/racing')]);
    expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(racing.find((r) => r.statusCode === 409)!.json().message).toBe(webhookErrors.urlExists);
    expect((await list()).filter((w) => w.url === 'https://hooks.example.test/racing')).toHaveLength(1);
    expect(await webhookHistory()).toBe(entries + 3);

    for (const hook of await list()) await remove(hook.id);
  });

  it('refuses no events, unknown events and strangers', async () => {
    const none = await t.app.inject({ method: 'POST', url: `${base()}/webhook`, headers: owner(), payload: { url: receiver.url, events: [] } });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain(webhookErrors.eventsRequired);
    const unknown = await t.app.inject({ method: 'POST', url: `${base()}/webhook`, headers: owner(), payload: { url: receiver.url, events: ['lock.exploded'] } });
    expect(unknown.statusCode).toBe(400);
    const stranger = (await createSandbox(t)).owner;
    for (const [method, url] of [['GET', `${base()}/webhook`], ['POST', `${base()}/webhook`]] as const) {
      const res = await t.app.inject({ method, url, headers: bearer(stranger.token), ...(method === 'POST' ? { payload: { url: receiver.url, events: ['share.added'] } } : {}) });
      expect(res.statusCode).toBe(404);
    }
  });
});

describe('delivering', () => {
  it('POSTs the event signed with the secret (Standard Webhooks) and logs the answer', async () => {
    answering(() => 200);
    const hook = await register(['application.updated']);
    const before = receiver.received.length;
    expect((await rename('Signed Doors')).statusCode).toBe(204);
    expect(await eventually(() => receiver.received.length > before, 8000)).toBe(true);
    const got = receiver.received.at(-1)!;
    expect(verifySignature(hook.secret, got)).toBe(true);
    expect(verifySignature(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got)).toBe(false);
    expect(Math.abs(Number(got.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    const body = bodyOf(got);
    expect(body).toMatchObject({ type: 'application.updated', timestamp: expect.any(String), data: { applicationId: sandbox.applicationId } });
    expect(JSON.stringify(body.data)).toContain('Signed Doors');
    expect(await eventually(async () => (await deliveries(hook.id))[0]?.status === 'succeeded', 5000)).toBe(true);
    expect((await deliveries(hook.id))[0]).toMatchObject({ id: got.id, eventType: 'application.updated', attempts: 1, responseStatus: 200, error: null });
    await remove(hook.id);
  });

  it('application.updated has one data shape whoever records the change: the trigger (a rename) and recordChange (a CORS domain)', async () => {
    answering(() => 200);
    const hook = await register(['application.updated']);
    const actor = { userId: sandbox.owner.userId, email: sandbox.owner.email };
    const announced = async (find: (data: Record<string, unknown>) => boolean) => {
      let found: Record<string, unknown> | undefined;
      const ok = await eventually(() => !!(found = receiver.received.map((r) => bodyOf(r).data).find(find)), 8000);
      expect(ok).toBe(true);
      return found!;
    };
    expect((await rename('Shaped Doors')).statusCode).toBe(204);
    expect(await announced((d) => JSON.stringify(d).includes('Shaped Doors'))).toEqual({
      applicationId: sandbox.applicationId,
      actor,
      changes: [{ kind: 'details', subject: null, changes: [{ field: 'name', before: expect.any(String), after: 'Shaped Doors' }] }],
    });
    const cors = await t.app.inject({ method: 'POST', url: `${base()}/cors`, headers: owner(), payload: { url: 'https://shaped.example.com' } });
    expect(cors.statusCode, cors.body).toBeLessThan(300);
    expect(await announced((d) => JSON.stringify(d).includes('shaped.example.com'))).toEqual({
      applicationId: sandbox.applicationId,
      actor,
      changes: [{ kind: 'cors', subject: null, changes: [{ field: 'corsDomains', before: null, after: 'https://shaped.example.com' }] }],
    });
    await remove(hook.id);
  });

  it('rotating the secret signs every later delivery with the new one only', async () => {
    answering(() => 200);
    const hook = await register(['application.updated']);
    const rotated = await t.app.inject({ method: 'POST', url: `${base()}/webhook/${hook.id}/rotate`, headers: owner() });
    expect(rotated.statusCode).toBe(200);
    const { secret } = rotated.json() as WebhookWithSecret;
    expect(secret).not.toBe(hook.secret);
    const before = receiver.received.length;
    await rename('Rotated Doors');
    expect(await eventually(() => receiver.received.length > before, 8000)).toBe(true);
    expect(verifySignature(secret, receiver.received.at(-1)!)).toBe(true);
    expect(verifySignature(hook.secret, receiver.received.at(-1)!)).toBe(false);
    await remove(hook.id);
    expect((await t.app.inject({ url: `${base()}/webhook/${hook.id}/delivery`, headers: owner() })).statusCode).toBe(404);
  });

  it('announces shares, revokes, accepted invitations, unlocks and refused unlocks to the endpoints that asked', async () => {
    answering(() => 200);
    const all = await register(['share.added', 'share.revoked', 'invitation.accepted', 'lock.unlocked', 'lock.unlock_refused']);
    const onlyUnlocks = await register(['lock.unlocked'], `${receiver.url}/unlocks`);
    const before = receiver.received.length;

    // An owner shares with a new email (an invitation), which its user accepts by signing in.
    const shared = await t.app.inject({ method: 'POST', url: `${base()}/lock/${lockId}/user`, headers: owner(), payload: { email: 'bob@example.com', role: 'USER' } });
    expect(shared.statusCode, shared.body).toBe(201);
    const bob = await certify(t, await appUserToken(sandbox, 'bob', 'bob@example.com'));
    // Unlocked, then refused once the share is revoked.
    const alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
    await share(t, lockId, alice.userId);
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
    const revoked = await t.app.inject({ method: 'DELETE', url: `${base()}/lock/${lockId}/user/${bob.userId}`, headers: owner() });
    expect(revoked.statusCode).toBe(204);
    expect((await execute(t, lockId, bob.token, signOperation(bob, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(403);

    expect(await eventually(() => receiver.received.length - before >= 6, 10_000)).toBe(true);
    // Nothing more arrives once neither endpoint is owed a delivery.
    const owed = `select 1 from webhook_deliveries where webhook_id in ($1, $2) and status in ('pending', 'retrying')`;
    expect(await eventually(async () => (await t.database.executeSql(owed, [all.id, onlyUnlocks.id])).rows.length === 0)).toBe(true);
    const got = receiver.received.slice(before).map((r) => ({ r, body: bodyOf(r) }));
    const types = got.map((g) => g.body.type).sort();
    expect(types).toEqual(['invitation.accepted', 'lock.unlock_refused', 'lock.unlocked', 'lock.unlocked', 'share.added', 'share.revoked']);
    const byType = (type: string) => got.find((g) => g.body.type === type)!.body.data;
    expect(byType('share.added')).toMatchObject({ lockId, email: 'bob@example.com', invited: true, role: 'USER' });
    expect(byType('invitation.accepted')).toMatchObject({ applicationId: sandbox.applicationId, email: 'bob@example.com', userId: bob.userId });
    expect(byType('lock.unlocked')).toMatchObject({ lockId, userId: alice.userId, email: 'alice@example.com', duration: expect.any(Number) });
    expect(byType('share.revoked')).toMatchObject({ lockId, userId: bob.userId });
    expect(byType('lock.unlock_refused')).toMatchObject({ lockId, userId: bob.userId, reason: expect.any(String) });
    // Each one signed with the secret of the endpoint it went to.
    const secretOf = new Map([[all.id, all.secret], [onlyUnlocks.id, onlyUnlocks.secret]]);
    for (const { r } of got) expect([...secretOf.values()].some((s) => verifySignature(s, r))).toBe(true);
    expect((await deliveries(onlyUnlocks.id)).map((d) => d.eventType)).toEqual(['lock.unlocked']);
    await remove(all.id);
    await remove(onlyUnlocks.id);
  });

  it('prunes finished deliveries past the retention, never owed or retrying ones', async () => {
    const hook = await register(['share.added']);
    const old = `now() - interval '${DELIVERY_RETENTION_DAYS + 1} days'`;
    const insert = (status: string, createdAt: string, relayAfter: string) =>
      t.database.executeSql(
        `insert into webhook_deliveries (webhook_id, application_id, event_type, payload, status, created_at, relay_after)
         values ($1, $2, 'share.added', '{}'::jsonb, '${status}', ${createdAt}, ${relayAfter}) returning id`,
        [hook.id, sandbox.applicationId],
      );
    const done = await insert('succeeded', old, 'null');
    const failed = await insert('failed', old, 'null');
    await insert('retrying', old, 'null');
    await insert('succeeded', 'now()', 'null');
    expect(await t.app.webhooks.pruneDeliveries()).toBe(2);
    const left = (await deliveries(hook.id)).map((d) => d.id);
    expect(left).toHaveLength(2);
    for (const gone of [done, failed]) expect(left).not.toContain((gone.rows[0] as { id: string }).id);
    await remove(hook.id);
  });

  it('an event in a transaction that fails is never delivered (the outbox row rolls back with it)', async () => {
    const hook = await register(['share.added']);
    // The share's transaction fails at its commit, after share.added is written: a deferred trigger on
    // lock_shares raises then. Before raising it counts, in a sequence (which no rollback undoes), whether
    // the transaction could see this hook's outbox row at that moment.
    await t.database.executeSql(`
      create sequence test_outbox_seen;
      create function test_fail_commit() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from webhook_deliveries where webhook_id = '${hook.id}') then perform nextval('test_outbox_seen'); end if;
        raise exception 'test: the commit fails';
      end $$;
      create constraint trigger test_fail_commit after insert on lock_shares deferrable initially deferred
        for each row execute function test_fail_commit();`);
    try {
      const res = await t.app.inject({ method: 'POST', url: `${base()}/lock/${lockId}/user`, headers: owner(), payload: { email: 'rolled-back@example.com', role: 'USER' } });
      expect(res.statusCode, res.body).toBe(500);
      const seen = await t.database.executeSql(`select is_called from test_outbox_seen`);
      expect(seen.rows).toEqual([{ is_called: true }]);
    } finally {
      await t.database.executeSql(`drop trigger test_fail_commit on lock_shares; drop function test_fail_commit(); drop sequence test_outbox_seen;`);
    }
    // The relay runs on its own; the row is gone, so there is nothing for it to find, now or later.
    expect(await deliveries(hook.id)).toEqual([]);
    const users = await t.app.inject({ url: `${base()}/lock/${lockId}/user`, headers: owner() });
    expect(users.statusCode, users.body).toBe(200);
    expect(users.body).not.toContain('rolled-back@example.com');
    await remove(hook.id);
  });

  it('pages the delivery log: the documented array, older pages through Link rel="next", none lost or repeated', async () => {
    const hook = await register(['share.added']);
    // 230 finished deliveries, three to a timestamp (ties broken by id), none owed to the relay.
    const total = 2 * WEBHOOK_DELIVERY_PAGE_SIZE + 30;
    await t.database.executeSql(
      `insert into webhook_deliveries (webhook_id, application_id, event_type, payload, status, attempts, response_status, created_at, relay_after)
       select $1, $2, 'share.added', '{}'::jsonb, 'succeeded', 1, 200, date_trunc('second', now()) - (i / 3) * interval '1 second', null
       from generate_series(1, ${total}) i`,
      [hook.id, sandbox.applicationId],
    );
    const expected = (
      await t.database.executeSql(`select id from webhook_deliveries where webhook_id = $1 order by created_at desc, id desc`, [hook.id])
    ).rows.map((r) => (r as { id: string }).id);
    expect(expected).toHaveLength(total);

    const seen: string[] = [];
    let url: string | null = `${base()}/webhook/${hook.id}/delivery`;
    let pages = 0;
    while (url) {
      const res = await t.app.inject({ url, headers: owner() });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as WebhookDelivery[];
      expect(Array.isArray(page)).toBe(true);
      expect(page.length).toBeLessThanOrEqual(WEBHOOK_DELIVERY_PAGE_SIZE);
      seen.push(...page.map((d) => d.id));
      const link = res.headers.link as string | undefined;
      const cursor = nextDeliveryCursor(link);
      if (cursor) expect(link).toBe(`<${base()}/webhook/${hook.id}/delivery?cursor=${cursor}>; rel="next"`);
      url = link ? link.slice(1, link.indexOf('>')) : null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);

    const impossible = (time: string) => Buffer.from(JSON.stringify([time, '00000000-0000-4000-8000-000000000000'])).toString('base64url');
    for (const cursor of [
      'garbage',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["2026-01-01T00:00:00.000000Z","x"]').toString('base64url'),
      'x'.repeat(201),
      // The right shape, but no time PostgreSQL holds: was a 500.
      impossible('9999-99-99T99:99:99.000000Z'),
      impossible('0000-00-00T00:00:00.000000Z'),
    ]) {
      const bad = await t.app.inject({ url: `${base()}/webhook/${hook.id}/delivery?cursor=${cursor}`, headers: owner() });
      expect(bad.statusCode, cursor).toBe(400);
      expect(bad.json()).toMatchObject({ code: 400, message: expect.stringContaining(webhookErrors.invalidCursor) });
    }
    await remove(hook.id);
  });

  it('an application.updated goes to the endpoints subscribed when the change was made, not to one added before the relay ran', async () => {
    answering(() => 200);
    const early = await register(['application.updated']);
    const res = await t.app.inject({ method: 'POST', url: base(), headers: owner(), payload: { name: 'Before the late one' } });
    expect(res.statusCode, res.body).toBe(204);
    const late = await register(['application.updated'], `${receiver.url}/late`);
    await t.app.webhooks.expandAnnouncements();
    const updates = async (id: string) => (await deliveries(id)).filter((d) => d.eventType === 'application.updated');
    expect(await eventually(async () => (await updates(early.id)).length === 1, 8000)).toBe(true);
    expect(await updates(late.id)).toEqual([]);
    await remove(early.id);
    await remove(late.id);
  });

  it('relays racing on two instances turn each owed application.updated into exactly one delivery; none is owed after', async () => {
    answering(() => 200);
    const b = await t.secondInstance();
    try {
      const hook = await register(['application.updated']);
      for (let i = 0; i < 25; i++) {
        const res = await (i % 2 ? b : t).app.inject({ method: 'POST', url: base(), headers: owner(), payload: { name: `Race ${i}` } });
        expect(res.statusCode, res.body).toBe(204);
      }
      // Besides each instance's own timer: four passes at once, two per instance.
      const taken = await Promise.all([t, b, t, b].map((x) => x.app.webhooks.expandAnnouncements()));
      expect(taken.reduce((a, n) => a + n, 0)).toBeLessThanOrEqual(25);
      const updates = async () => (await deliveries(hook.id)).filter((d) => d.eventType === 'application.updated');
      expect(await eventually(async () => (await updates()).length >= 25)).toBe(true);
      const owed = await t.app.database.executeSql(`select count(*)::int as n from application_changes where application_id = $1 and announce is not null`, [sandbox.applicationId]);
      expect((owed.rows[0] as { n: number }).n).toBe(0);
      expect(await updates()).toHaveLength(25);
      await remove(hook.id);
    } finally {
      await b.close();
    }
  });

  it('a webhook added on instance A receives the next update made on instance B, and after one is removed on A, a new one is announced at once', async () => {
    answering(() => 200);
    const b = await t.secondInstance();
    try {
      const renameOnB = async (name: string) => {
        const res = await b.app.inject({ method: 'POST', url: base(), headers: owner(), payload: { name } });
        expect(res.statusCode, res.body).toBe(204);
      };
      const updatesTo = async (webhookId: string) =>
        (await deliveries(webhookId)).filter((d) => d.eventType === 'application.updated').map((d) => d.id);
      // The relay (either instance's, within a second) turns the owed event into deliveries.
      const reaches = async (webhookId: string, n: number) => {
        await b.app.webhooks.expandAnnouncements();
        return eventually(async () => (await updatesTo(webhookId)).length === n, 8000);
      };
      const entries = async () => ((await t.app.database.executeSql(`select count(*)::int as n from application_changes where application_id = $1`, [sandbox.applicationId])).rows[0] as { n: number }).n;
      // B updates while nothing is subscribed to application.updated.
      const unrelated = await register(['share.added'], `${receiver.url}/unrelated`);
      await renameOnB('Quiet Doors 1');
      await renameOnB('Quiet Doors 2');

      // A webhook registered on A; B has heard nothing of it, and its very next update is announced.
      const hook = await register(['application.updated']);
      await renameOnB('Loud Doors 1');
      expect(await reaches(hook.id, 1)).toBe(true);
      await renameOnB('Loud Doors 2');
      expect(await reaches(hook.id, 2)).toBe(true);
      expect(await eventually(() => receiver.received.filter((r) => bodyOf(r).type === 'application.updated' && JSON.stringify(bodyOf(r).data).includes('Loud Doors 2')).length > 0, 8000)).toBe(true);

      // Removed on A: B's next update is not delivered to it; a new one on A is announced again at once.
      await remove(hook.id);
      await renameOnB('Quiet Doors 3');
      const again = await register(['application.updated']);
      await renameOnB('Loud Doors 3');
      expect(await reaches(again.id, 1)).toBe(true);
      expect(await updatesTo(unrelated.id)).toEqual([]);
      // Nothing changed, nothing recorded, so nothing is owed.
      const before = await entries();
      await renameOnB('Loud Doors 3');
      expect(await entries()).toBe(before);
      await remove(again.id);
      await remove(unrelated.id);
    } finally {
      await b.close();
    }
  });
});

/**
 * Deliveries that wait on the retry backoff and the delivery time-out run side by side, each on an
 * application and a receiver of its own.
 */
describe.concurrent('delivering, on the clock', () => {
  it('retries a failed delivery with exponential backoff, always with the same webhook-id, then gives up', async () => {
    const { s, r } = await ownEndpoint();
    const hook = await register(['application.updated'], r.url, s);
    r.setAnswer(() => 500);
    await rename('Failing Doors', s);
    // 1 + RETRY_LIMIT attempts, the k-th retry RETRY_DELAY·2^(k-1) to RETRY_DELAY·2^k seconds after the previous.
    expect(await eventually(async () => (await deliveries(hook.id, s))[0]?.status === 'failed', 20_000)).toBe(true);
    const attempts = r.received.slice();
    expect(attempts).toHaveLength(1 + RETRY_LIMIT);
    expect(new Set(attempts.map((a) => a.id)).size).toBe(1);
    const gaps = attempts.slice(1).map((a, i) => (a.at - attempts[i]!.at) / 1000);
    expect(gaps[0]).toBeGreaterThanOrEqual(RETRY_DELAY_S * 0.9);
    expect(gaps[1]).toBeGreaterThanOrEqual(RETRY_DELAY_S * 2 * 0.9);
    expect((await deliveries(hook.id, s))[0]).toMatchObject({ status: 'failed', attempts: 1 + RETRY_LIMIT, responseStatus: 500 });

    // Resend: the same delivery again (same id, same body), and this time the receiver takes it.
    r.setAnswer(() => 204);
    const failed = (await deliveries(hook.id, s))[0]!;
    const resent = await t.app.inject({ method: 'POST', url: `${base(s)}/webhook/${hook.id}/delivery/${failed.id}/resend`, headers: owner(s) });
    expect(resent.statusCode, resent.body).toBe(202);
    expect(await eventually(async () => (await deliveries(hook.id, s))[0]?.status === 'succeeded', 8000)).toBe(true);
    const last = r.received.at(-1)!;
    expect(last.id).toBe(failed.id);
    expect(last.body).toBe(attempts[0]!.body);
    expect(verifySignature(hook.secret, last)).toBe(true);
    expect((await deliveries(hook.id, s))[0]).toMatchObject({ attempts: 2 + RETRY_LIMIT, responseStatus: 204 });
    await remove(hook.id, s);
  });

  it('a receiver that does not answer in time is a failed attempt, retried', async () => {
    const { s, r } = await ownEndpoint();
    const hook = await register(['application.updated'], r.url, s);
    let hung = false;
    r.setAnswer(() => (hung ? 200 : ((hung = true), 'hang')));
    await rename('Slow Doors', s);
    expect(await eventually(async () => (await deliveries(hook.id, s))[0]?.status === 'succeeded', 15_000)).toBe(true);
    expect((await deliveries(hook.id, s))[0]!.attempts).toBe(2);
    await remove(hook.id, s);
  });
});
