import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundErrors, WEBHOOK_TEST_EVENT, WEBHOOK_TEST_LIMIT, type WebhookDelivery, type WebhookPayload, type WebhookWithSecret } from '@latchkey/contract';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { createSandbox, type Sandbox } from '../../../test/fixtures/operations.js';
import { startReceiver, verifySignature } from '../../../test/fixtures/webhook-receiver.js';

/** "Send a test event", and the hint a development service gives for a refused localhost URL. */
let t: TestApp;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const base = () => `/api/platform/application/${sandbox.applicationId}`;

beforeAll(async () => {
  t = await createTestApp({ OUTBOUND_ALLOW: '127.0.0.1', WEBHOOK_TIMEOUT_SECONDS: '2' });
  sandbox = await createSandbox(t);
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

describe('POST …/webhook/{webhookId}/test', () => {
  it('sends a signed webhook.test delivery through the queue to an endpoint subscribed to other events; it is in the delivery log', async () => {
    const created = await t.app.inject({ method: 'POST', url: `${base()}/webhook`, headers: bearer(sandbox.owner.token), payload: { url: receiver.url, events: ['lock.unlocked'] } });
    expect(created.statusCode, created.body).toBe(201);
    const hook = created.json() as WebhookWithSecret;

    const res = await t.app.inject({ method: 'POST', url: `${base()}/webhook/${hook.id}/test`, headers: bearer(sandbox.owner.token) });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json() as WebhookDelivery;
    expect(queued).toMatchObject({ eventType: WEBHOOK_TEST_EVENT, status: 'pending', attempts: 0 });

    expect(await eventually(() => receiver.received.some((r) => r.id === queued.id), 10_000)).toBe(true);
    const received = receiver.received.find((r) => r.id === queued.id)!;
    expect(verifySignature(hook.secret, received)).toBe(true);
    const body = JSON.parse(received.body) as WebhookPayload<{ webhookId: string; applicationId: string }>;
    expect(body).toMatchObject({ type: 'webhook.test', data: { webhookId: hook.id, applicationId: sandbox.applicationId } });

    const log = async () => ((await t.app.inject({ url: `${base()}/webhook/${hook.id}/delivery`, headers: bearer(sandbox.owner.token) })).json() as WebhookDelivery[]).find((d) => d.id === queued.id);
    expect(await eventually(async () => (await log())?.status === 'succeeded', 10_000)).toBe(true);
    expect(await log()).toMatchObject({ eventType: 'webhook.test', responseStatus: 200, attempts: 1 });
  });

  it('is for owners only (another owner 404, no token 401), 404 for an unknown endpoint, and rate-limited per owner', async () => {
    const hook = (
      await t.app.inject({ method: 'POST', url: `${base()}/webhook`, headers: bearer(sandbox.owner.token), payload: { url: `${receiver.url}/limited`, events: ['share.added'] } })
    ).json() as WebhookWithSecret;
    const other = await createSandbox(t);
    const url = `${base()}/webhook/${hook.id}/test`;
    expect((await t.app.inject({ method: 'POST', url, headers: bearer(other.owner.token) })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: `${base()}/webhook/${crypto.randomUUID()}/test`, headers: bearer(sandbox.owner.token) })).statusCode).toBe(404);
    // Another application's owner cannot reach this endpoint through their own application either.
    expect((await t.app.inject({ method: 'POST', url: `/api/platform/application/${other.applicationId}/webhook/${hook.id}/test`, headers: bearer(other.owner.token) })).statusCode).toBe(404);

    const statuses: number[] = [];
    for (let i = 0; i < WEBHOOK_TEST_LIMIT.max + 1; i++) statuses.push((await t.app.inject({ method: 'POST', url, headers: bearer(sandbox.owner.token) })).statusCode);
    expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(WEBHOOK_TEST_LIMIT.max);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('a refused localhost URL in development names OUTBOUND_ALLOW', () => {
  const register = (app: TestApp, token: string, applicationId: string, url: string) =>
    app.app.inject({ method: 'POST', url: `/api/platform/application/${applicationId}/webhook`, headers: bearer(token), payload: { url, events: ['share.added'] } });

  it('in production (NODE_ENV=production with a PUBLIC_URL): no hint (the guard is configured per process: this runs before the development app below)', async () => {
    const res = await register(t, sandbox.owner.token, sandbox.applicationId, 'http://10.0.0.7:4899/hooks');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 400, message: `${outboundErrors.notHttps}: 10.0.0.7:4899` });
  });

  it('with the development defaults: the error carries the host to allow', async () => {
    const dev = await createTestApp({ NODE_ENV: 'development' });
    try {
      const s = await createSandbox(dev);
      const http = await register(dev, s.owner.token, s.applicationId, 'http://127.0.0.1:4899/hooks');
      expect(http.statusCode).toBe(400);
      expect(http.json()).toEqual({ code: 400, message: `${outboundErrors.notHttps}: 127.0.0.1:4899`, hint: { outboundAllow: '127.0.0.1' } });
      const loopback = await register(dev, s.owner.token, s.applicationId, 'https://LOCALHOST:8443/hooks');
      expect(loopback.json()).toMatchObject({ message: `${outboundErrors.privateAddress}: localhost`, hint: { outboundAllow: 'localhost' } });
    } finally {
      await dev.close();
    }
  });
});
