import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, uniqueEmail, type TestApp } from '../../test/helpers.js';
import { bearer } from '../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation, type Sandbox } from '../../test/fixtures/operations.js';
import { startReceiver } from '../../test/fixtures/webhook-receiver.js';
import { connectMqtt, deviceTls, provisionDevice } from '../../test/fixtures/devices.js';
import { deviceTopic } from '@latchkey/contract';

/**
 * Metrics: names and labels as a scrape shows them after real requests — sign-ins, a refused
 * and an accepted unlock, unlocks of a device-backed lock whose device is offline (503) or never answers
 * (504), a certificate, a 429, a webhook delivery retried and then failed — and the scrape's guard.
 */
const TOKEN = 'metrics-token-0123456789abcdef';
let t: TestApp;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let metricsUrl: string;
let mqttPort: number;

beforeAll(async () => {
  t = await createTestApp({
    METRICS_TOKEN: TOKEN,
    LOGIN_RATE_LIMIT_MAX: '2',
    OUTBOUND_ALLOW: '127.0.0.1',
    // One retry, a second or two after the first attempt: the receiver's 500s are counted retrying, then failed.
    WEBHOOK_RETRY_DELAY_SECONDS: '1',
    WEBHOOK_RETRY_LIMIT: '1',
    WEBHOOK_TIMEOUT_SECONDS: '2',
    // A device that never answers is given up on (504) after half a second.
    DEVICE_TIMEOUT_SECONDS: '0.5',
    MQTT_PORT: '0',
  });
  mqttPort = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  receiver = await startReceiver(() => 500);
  const address = await t.app.metrics.listen('127.0.0.1', 0);
  metricsUrl = `${address}/metrics`;
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function scrape(): Promise<string> {
  const res = await t.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('text/plain');
  return res.body;
}
/** The value of one series, labels given in any order; undefined when it is not there. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('is refused without the bearer token (401), and with a wrong one', async () => {
    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/metrics', headers: bearer('metrics-token-0123456789abcdeX') })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/metrics', headers: { authorization: TOKEN } })).statusCode).toBe(401);
  });

  it('takes the bearer scheme in any case, as HTTP auth schemes are, and still refuses a wrong token whatever its case', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr'])
      expect((await t.app.inject({ url: '/metrics', headers: { authorization: `${scheme} ${TOKEN}` } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN.toUpperCase()}` } })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/metrics', headers: { authorization: `Basic ${TOKEN}` } })).statusCode).toBe(401);
  });

  it('is not served on the public port when METRICS_TOKEN is not set', async () => {
    const other = await createTestApp({ OUTBOUND_ALLOW: '127.0.0.1' }); // the outbound guard is process-wide
    try {
      // Not served: the portal's own fallback answers (its index.html when it is built), never the figures.
      const res = await other.app.inject({ url: '/metrics' });
      expect(res.statusCode).not.toBe(401);
      expect(res.body).not.toContain('latchkey_');
      expect(res.body).not.toContain('process_cpu');
    } finally {
      await other.close();
    }
  });

  it('is served on the metrics port without a token', async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('latchkey_http_request_duration_seconds');
  });

  it('has request durations per route pattern, method and status class — never a path, an id or a method of the caller’s invention', async () => {
    const appPath = `/api/platform/application/${sandbox.applicationId}`;
    expect((await t.app.inject({ url: appPath, headers: bearer(sandbox.owner.token) })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/no/such/route/12345' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/api/health', method: 'PROPFIND' as 'GET' })).statusCode).toBe(404);
    const text = await scrape();
    expect(valueOf(text, 'latchkey_http_request_duration_seconds_count', { route: '/api/platform/application/:applicationId', method: 'GET', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'latchkey_http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'latchkey_http_request_duration_seconds_bucket', { route: '/api/platform/application/:applicationId', le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(sandbox.applicationId);
    expect(text).not.toContain('/no/such/route');
    expect(text).not.toContain('PROPFIND');
  });

  it('counts sign-ins, failed sign-ins and rate-limit refusals', async () => {
    const email = uniqueEmail('metrics');
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'metrics-pass' } })).statusCode).toBe(200);
    const before = await scrape();
    const url = t.app.routeTable.find((r) => r.method === 'POST' && (r.url === '/api/auth/token' || r.url === '/api/auth/login'))!.url;
    const login = (password: string) => t.app.inject({ method: 'POST', url, payload: { email, password } });
    expect((await login('metrics-pass')).statusCode).toBe(200);
    expect((await login('wrong-password')).statusCode).toBe(401);
    expect((await login('metrics-pass')).statusCode).toBe(429);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => (valueOf(after, name, labels) ?? 0) - (valueOf(before, name, labels) ?? 0);
    expect(delta('latchkey_sign_ins_total', { outcome: 'success' })).toBe(1);
    expect(delta('latchkey_sign_ins_total', { outcome: 'failed' })).toBe(1);
    expect(delta('latchkey_sign_ins_total', { outcome: 'rate_limited' })).toBe(1);
    expect(delta('latchkey_rate_limit_refusals_total', { route: url })).toBe(1);
  });

  it('counts certificates and operations by type and outcome, a refusal by its reason; a refused unlock’s failed webhook by outcome', async () => {
    const lockId = await createLock(t, sandbox.applicationId);
    const hook = await t.app.inject({
      method: 'POST',
      url: `/api/platform/application/${sandbox.applicationId}/webhook`,
      headers: bearer(sandbox.owner.token),
      payload: { url: receiver.url, events: ['lock.unlock_refused'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const token = await appUserToken(sandbox, 'metrics-alice');
    const alice = await certify(t, token);
    const unlock = () => execute(t, lockId, token, signOperation(alice, lockId, { type: 'MUTATE_LOCK', locked: false }));
    expect((await unlock()).statusCode).toBe(403); // no share yet
    await share(t, lockId, alice.userId);
    expect((await unlock()).statusCode).toBe(204);
    expect((await execute(t, lockId, token, 'not-a-jws')).statusCode).toBe(400);

    const text = await scrape();
    expect(valueOf(text, 'latchkey_certificates_total', { outcome: 'issued' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'latchkey_operations_total', { type: 'MUTATE_LOCK', outcome: 'refused', reason: 'noAccess' })).toBe(1);
    expect(valueOf(text, 'latchkey_operations_total', { type: 'MUTATE_LOCK', outcome: 'accepted', reason: 'none' })).toBe(1);
    expect(valueOf(text, 'latchkey_operations_total', { type: 'unknown', outcome: 'refused', reason: 'malformed' })).toBe(1);
    expect(valueOf(text, 'latchkey_device_requests_in_flight')).toBe(0);
    expect(text).not.toContain(lockId);
    expect(text).not.toContain(alice.userId);

    // The refused unlock's event goes to a receiver that answers 500: a failed attempt, to be retried; the
    // retry (the last, WEBHOOK_RETRY_LIMIT 1) fails too.
    expect(await eventually(async () => (valueOf(await scrape(), 'latchkey_webhook_deliveries_total', { outcome: 'retrying' }) ?? 0) >= 1, 10_000)).toBe(true);
    expect(await eventually(async () => (valueOf(await scrape(), 'latchkey_webhook_deliveries_total', { outcome: 'failed' }) ?? 0) >= 1, 20_000)).toBe(true);
    expect(valueOf(await scrape(), 'latchkey_webhook_deliveries_total', { outcome: 'succeeded' }) ?? 0).toBe(0);
    const later = await scrape();
    expect(valueOf(later, 'latchkey_webhook_queue_depth', { stage: 'owed' })).toBeGreaterThanOrEqual(0);
    expect(valueOf(later, 'latchkey_webhook_queue_depth', { stage: 'queued' })).toBeGreaterThanOrEqual(0);
  });

  it('has the live streams, the database pool, the event loop lag and the process defaults', async () => {
    const text = await scrape();
    expect(valueOf(text, 'latchkey_sse_connections')).toBe(0);
    expect(valueOf(text, 'latchkey_devices_connected')).toBe(0);
    expect(valueOf(text, 'latchkey_http_connections')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'latchkey_db_pool_connections', { state: 'max' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'latchkey_db_pool_connections', { state: 'waiting' })).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts an unlock of a device-backed lock as unavailable: offline when its device is not connected (503), timeout when it never answers (504)', async () => {
    const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
    const token = await appUserToken(sandbox, 'metrics-bob');
    const bob = await certify(t, token);

    // A device provisioned but never connected.
    const offlineLock = await createLock(t, sandbox.applicationId);
    await share(t, offlineLock, bob.userId);
    await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, offlineLock);
    expect((await execute(t, offlineLock, token, signOperation(bob, offlineLock, UNLOCK))).statusCode).toBe(503);

    // A device that is online and hears the operation, but never answers.
    const silentLock = await createLock(t, sandbox.applicationId);
    await share(t, silentLock, bob.userId);
    const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, silentLock);
    const client = await connectMqtt(mqttPort, { ...deviceTls(device), clientId: device.deviceId });
    try {
      await client.subscribeAsync(deviceTopic(device.deviceId, 'op'), { qos: 1 });
      await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
      await t.app.deviceRuntime.settled();
      expect(valueOf(await scrape(), 'latchkey_devices_connected')).toBe(1);
      const heard = new Promise<string>((resolve) => client.on('message', (topic) => topic === deviceTopic(device.deviceId, 'op') && resolve(topic)));
      const res = await execute(t, silentLock, token, signOperation(bob, silentLock, UNLOCK));
      expect(res.statusCode, res.body).toBe(504);
      await heard;
      // Offline again, as a device says when it goes: no device stays connected after this test.
      await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'offline', { qos: 1, retain: true });
    } finally {
      client.end(true);
    }
    expect(await eventually(async () => valueOf(await scrape(), 'latchkey_devices_connected') === 0)).toBe(true);

    const text = await scrape();
    expect(valueOf(text, 'latchkey_operations_total', { type: 'MUTATE_LOCK', outcome: 'unavailable', reason: 'offline' })).toBe(1);
    expect(valueOf(text, 'latchkey_operations_total', { type: 'MUTATE_LOCK', outcome: 'unavailable', reason: 'timeout' })).toBe(1);
    expect(text).not.toContain(device.deviceId);
  });
});
