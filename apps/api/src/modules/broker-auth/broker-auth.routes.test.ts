import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { provisionDevice } from '../../../test/fixtures/devices.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/** What RabbitMQ's HTTP auth backend is told about devices and the service (deploy/rabbitmq). */

const SECRET = 'broker-auth-test-secret';
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let applicationId: string;

beforeAll(async () => {
  t = await createTestApp({ BROKER_AUTH_SECRET: SECRET });
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId);
});
afterAll(async () => {
  await t?.close();
});

const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`broker:${password}`).toString('base64')}` });
async function ask(path: string, query: Record<string, string>, password = SECRET) {
  const res = await t.app.inject({ method: 'GET', url: `/api/broker-auth/${path}?${new URLSearchParams(query)}`, headers: basic(password) });
  return { status: res.statusCode, body: res.body };
}
const newDevice = async () => {
  const lockId = await createLock(t, applicationId);
  return { ...(await provisionDevice(t, owner.token, applicationId, lockId)), lockId };
};
const topic = (username: string, routingKey: string, permission: 'read' | 'write') =>
  ask('topic', { username, vhost: '/', resource: 'topic', name: 'amq.topic', permission, routing_key: routingKey });

describe('the broker’s questions', () => {
  it('without BROKER_AUTH_SECRET the questions are not served', async () => {
    const plain = await createTestApp();
    try {
      expect((await plain.app.inject({ method: 'GET', url: '/api/broker-auth/user?username=latchkey-service', headers: basic(SECRET) })).statusCode).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it('only the broker, with the shared secret, is answered', async () => {
    expect(await ask('user', { username: 'latchkey-service' }, 'wrong')).toEqual({ status: 401, body: 'deny' });
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/broker-auth/user?username=latchkey-service' });
    expect(anonymous.statusCode).toBe(401);
    expect(await ask('user', { username: 'latchkey-service' })).toEqual({ status: 200, body: 'allow' });
  });

  it('EMQX, asking for JSON and naming the client id at login, gets {result}; a client id not its own is refused', async () => {
    const device = await newDevice();
    const emqx = async (query: Record<string, string>) =>
      (await t.app.inject({ method: 'GET', url: `/api/broker-auth/user?${new URLSearchParams(query)}`, headers: { ...basic(SECRET), accept: 'application/json' } })).json();
    expect(await emqx({ username: device.deviceId, client_id: device.deviceId })).toEqual({ result: 'allow' });
    expect(await emqx({ username: device.deviceId, client_id: 'someone-else' })).toEqual({ result: 'deny' });
    expect(await emqx({ username: 'latchkey-service', client_id: 'latchkey-service-9f' })).toEqual({ result: 'allow' });
  });

  it('a device logs in while it is bound; once unbound it is refused', async () => {
    const device = await newDevice();
    expect((await ask('user', { username: device.deviceId })).body).toBe('allow');
    expect((await ask('user', { username: '00000000-0000-4000-8000-000000000000' })).body).toBe('deny');
    expect((await ask('user', { username: 'not-a-device' })).body).toBe('deny');
    const unbind = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${applicationId}/lock/${device.lockId}/device`, headers: bearer(owner.token) });
    expect(unbind.statusCode).toBe(204);
    expect((await ask('user', { username: device.deviceId })).body).toBe('deny');
  });

  it('a device’s client id is its certificate’s name; the service’s instances use their own prefix', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    expect((await ask('vhost', { username: device.deviceId, vhost: '/', client_id: device.deviceId })).body).toBe('allow');
    expect((await ask('vhost', { username: device.deviceId, vhost: '/', client_id: other.deviceId })).body).toBe('deny');
    expect((await ask('vhost', { username: device.deviceId, vhost: '/', client_id: 'latchkey-service-x' })).body).toBe('deny');
    expect((await ask('vhost', { username: device.deviceId, vhost: 'other', client_id: device.deviceId })).body).toBe('deny');
    expect((await ask('vhost', { username: 'latchkey-service', vhost: '/', client_id: 'latchkey-service-1a2b' })).body).toBe('allow');
    expect((await ask('vhost', { username: 'latchkey-service', vhost: '/', client_id: device.deviceId })).body).toBe('deny');
  });

  it('a device writes only what a device sends and reads only what the platform sends it, on its own topics', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const own = `latchkey.d.${device.deviceId}`;
    for (const name of ['presence', 'state', 'result', 'renew', 'event']) expect((await topic(device.deviceId, `${own}.${name}`, 'write')).body).toBe('allow');
    for (const name of ['config', 'op', 'certificate']) expect((await topic(device.deviceId, `${own}.${name}`, 'read')).body).toBe('allow');
    expect((await topic(device.deviceId, `${own}.config`, 'write')).body).toBe('deny');
    expect((await topic(device.deviceId, `${own}.state`, 'read')).body).toBe('deny');
    expect((await topic(device.deviceId, `${own}.park.1`, 'write')).body).toBe('deny');
    expect((await topic(device.deviceId, `latchkey.d.${other.deviceId}.state`, 'write')).body).toBe('deny');
    expect((await topic(device.deviceId, `latchkey.d.${other.deviceId}.op`, 'read')).body).toBe('deny');
    expect((await topic(device.deviceId, 'latchkey.d.*.op', 'read')).body).toBe('deny');
    expect((await topic(device.deviceId, 'latchkey.d.#', 'read')).body).toBe('deny');
    expect((await topic('latchkey-service', 'latchkey.d.*.presence', 'read')).body).toBe('allow');
    expect((await topic('latchkey-service', `${own}.op`, 'write')).body).toBe('allow');
    expect((await topic('latchkey-service', 'elsewhere.x', 'write')).body).toBe('deny');
  });

  it('queues: a client only its own subscription queues; the exchange only amq.topic, never configured', async () => {
    const device = await newDevice();
    const queue = (username: string, name: string, permission: string) => ask('resource', { username, vhost: '/', resource: 'queue', name, permission });
    expect((await queue(device.deviceId, `mqtt-subscription-${device.deviceId}qos1`, 'configure')).body).toBe('allow');
    expect((await queue(device.deviceId, 'mqtt-subscription-latchkey-service-1qos1', 'read')).body).toBe('deny');
    expect((await queue('latchkey-service', 'mqtt-subscription-latchkey-service-1qos1', 'read')).body).toBe('allow');
    expect((await queue(device.deviceId, 'some-queue', 'read')).body).toBe('deny');
    const exchange = (name: string, permission: string) => ask('resource', { username: device.deviceId, vhost: '/', resource: 'exchange', name, permission });
    expect((await exchange('amq.topic', 'write')).body).toBe('allow');
    expect((await exchange('amq.topic', 'configure')).body).toBe('deny');
    expect((await exchange('amq.direct', 'write')).body).toBe('deny');
  });
});
