import { createPrivateKey, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEvent } from '@latchkey/device';
import type { WebhookPayload, WebhookWithSecret } from '@latchkey/contract';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { provisionDevice } from '../../../test/fixtures/devices.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../../test/fixtures/operations.js';
import { startReceiver, verifySignature, type Received } from '../../../test/fixtures/webhook-receiver.js';

/**
 * The door's webhooks, delivered: a real receiver subscribed to them gets each, signed, with its payload —
 * from a sandbox lock made to report them, and (the audit gap) from a device's signed events.
 */
let t: TestApp;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let hook: WebhookWithSecret;
let lockId: string;
const EVENTS = ['lock.unlocked', 'lock.door_opened', 'lock.door_closed', 'device.low_battery', 'device.jammed', 'device.tampered', 'device.audit_gap', 'device.offline', 'device.online'];

const bodyOf = (r: Received) => JSON.parse(r.body) as WebhookPayload<Record<string, unknown>>;
const simulate = (kind: string, payload?: object) =>
  t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/simulate/${kind}`, headers: bearer(sandbox.owner.token), ...(payload ? { payload } : {}) });
/** The delivery of `type` about `lock`, once it has arrived. */
async function delivered(type: string, lock = lockId): Promise<{ data: Record<string, unknown>; received: Received }> {
  const find = () => receiver.received.find((r) => bodyOf(r).type === type && bodyOf(r).data.lockId === lock);
  expect(await eventually(() => find() !== undefined, 8000), type).toBe(true);
  const received = find()!;
  expect(verifySignature(hook.secret, received)).toBe(true);
  return { data: bodyOf(received).data, received };
}

beforeAll(async () => {
  t = await createTestApp({ OUTBOUND_ALLOW: '127.0.0.1', WEBHOOK_RETRY_DELAY_SECONDS: '1' });
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId, { name: 'Webhook Door' });
  receiver = await startReceiver();
  const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${sandbox.applicationId}/webhook`, headers: bearer(sandbox.owner.token), payload: { url: receiver.url, events: EVENTS } });
  expect(res.statusCode, res.body).toBe(201);
  hook = res.json() as WebhookWithSecret;
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

describe('the door’s webhooks, delivered', () => {
  it('door opened and closed, battery low, jammed, tampered: each with the lock, where it came from, and when', async () => {
    for (const [kind, body] of [['door_opened'], ['door_closed'], ['battery', { value: 7 }], ['jammed'], ['tampered']] as const) {
      expect((await simulate(kind, body)).statusCode).toBe(204);
    }
    const common = { applicationId: sandbox.applicationId, lockId, lockName: 'Webhook Door', deviceId: null, source: 'device', offline: false, at: expect.any(String) };
    expect((await delivered('lock.door_opened')).data).toEqual(common);
    expect((await delivered('lock.door_closed')).data).toEqual(common);
    expect((await delivered('device.low_battery')).data).toEqual({ ...common, battery: 7 });
    expect((await delivered('device.jammed')).data).toEqual(common);
    expect((await delivered('device.tampered')).data).toEqual(common);
  });

  it('offline and online, as a device’s presence', async () => {
    expect((await simulate('offline')).statusCode).toBe(204);
    expect((await simulate('online')).statusCode).toBe(204);
    const expected = { applicationId: sandbox.applicationId, lockId, lockName: 'Webhook Door', deviceId: null };
    expect((await delivered('device.offline')).data).toEqual(expected);
    expect((await delivered('device.online')).data).toEqual(expected);
  });

  it('an unlock through the cloud: method, access code and source', async () => {
    const alice = await certify(t, await appUserToken(sandbox, 'alice', 'alice@example.com'));
    await share(t, lockId, alice.userId);
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: false }))).statusCode).toBe(204);
    expect((await delivered('lock.unlocked')).data).toEqual({
      applicationId: sandbox.applicationId,
      lockId,
      lockName: 'Webhook Door',
      userId: alice.userId,
      email: 'alice@example.com',
      duration: expect.any(Number),
      method: 'mobile_key',
      accessCodeId: null,
      source: 'platform',
    });
  });

  it('an audit gap: the device, what is missing and why', async () => {
    const doorLock = await createLock(t, sandbox.applicationId, { name: 'Chained Door' });
    const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, doorLock);
    const jws = signEvent({ eventId: randomUUID(), seq: 3, prev: null, at: Date.now(), type: 'door_opened' }, createPrivateKey(device.key.privateKeyPem), device.deviceId);
    expect(await t.app.deviceRuntime.events.record(device.deviceId, Buffer.from(jws))).toBe('logged');
    expect((await delivered('device.audit_gap', doorLock)).data).toEqual({
      applicationId: sandbox.applicationId,
      lockId: doorLock,
      lockName: 'Chained Door',
      deviceId: device.deviceId,
      kind: 'missing',
      missingFrom: 1,
      missingTo: 2,
      seq: 3,
      reason: 'Events 1–2 from the lock are missing',
    });
  });
});
