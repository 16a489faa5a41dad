import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { x509 } from '../../lib/x509-ca.js';
import { lockDevices, revokedDeviceCertificates } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { createCsr, provisionDevice, type ProvisionedDevice } from '../../../test/fixtures/devices.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';
import { parseBrokerName } from './broker-auth.routes.js';

/** What RabbitMQ's and EMQX's HTTP authentication is told about devices and the service (deploy/rabbitmq, deploy/emqx). */

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
/** A certificate's subject as RabbitMQ and EMQX name it to the platform: last RDN first, `SERIALNUMBER=…,CN=…`. */
const subjectOf = (certificate: string) => {
  const name = new x509.X509Certificate(certificate).subjectName.toJSON();
  return name
    .map((rdn) => Object.entries(rdn).map(([type, [value]]) => `${type === '2.5.4.5' ? 'SERIALNUMBER' : type}=${value}`).join('+'))
    .reverse()
    .join(',');
};
const serialOf = (certificate: string) => new x509.X509Certificate(certificate).serialNumber.toLowerCase();
/** The request a device sends to renew: for its own key, naming itself. */
const csrFor = (device: ProvisionedDevice) => createCsr(device.key, `CN=${device.deviceId}`);
const login = async (username: string) => (await ask('user', { username })).body;

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
    expect(await emqx({ username: subjectOf(device.certificate), client_id: device.deviceId })).toEqual({ result: 'allow' });
    expect(await emqx({ username: subjectOf(device.certificate), client_id: 'someone-else' })).toEqual({ result: 'deny' });
    expect(await emqx({ username: 'CN=latchkey-service', client_id: 'latchkey-service-9f' })).toEqual({ result: 'allow' });
  });

  it('a device logs in with its certificate while it is bound; once unbound it is refused', async () => {
    const device = await newDevice();
    const subject = subjectOf(device.certificate);
    expect(subject).toBe(`SERIALNUMBER=${serialOf(device.certificate)},CN=${device.deviceId}`);
    expect(await login(subject)).toBe('allow');
    expect(await login(`SERIALNUMBER=${serialOf(device.certificate)},CN=00000000-0000-4000-8000-000000000000`)).toBe('deny');
    expect(await login('CN=not-a-device')).toBe('deny');
    const unbind = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${applicationId}/lock/${device.lockId}/device`, headers: bearer(owner.token) });
    expect(unbind.statusCode).toBe(204);
    expect(await login(subject)).toBe('deny');
  });

  it('only the certificate a device holds now logs in: the one it renewed from only during its grace', async () => {
    const device = await newDevice();
    const before = subjectOf(device.certificate);
    // A renewal, as the platform records one: the new serial on the row, the old one revoked at the grace's end.
    const renewed = await t.app.deviceCa.issueDeviceCertificate(await csrFor(device), device.deviceId);
    await t.database.db.update(lockDevices).set({ certificateSerial: renewed.serial, certificateSubjectSerial: true }).where(eq(lockDevices.id, device.deviceId));
    await t.database.db.insert(revokedDeviceCertificates).values({ serial: serialOf(device.certificate), deviceId: device.deviceId, revokedAt: sql`now() + interval '1 day'` });
    const after = subjectOf(renewed.certificate);
    expect(await login(after)).toBe('allow');
    expect(await login(before)).toBe('allow');
    await t.database.db.update(revokedDeviceCertificates).set({ revokedAt: sql`now() - interval '1 second'` }).where(eq(revokedDeviceCertificates.serial, serialOf(device.certificate)));
    expect(await login(before)).toBe('deny');
    expect(await login(after)).toBe('allow');
    // The CN alone, or a certificate with the right CN and another serial, is not the device's certificate.
    expect(await login(`CN=${device.deviceId}`)).toBe('deny');
    expect(await login(device.deviceId)).toBe('deny');
    expect(await login(`SERIALNUMBER=1234abcd,CN=${device.deviceId}`)).toBe('deny');
  });

  it('a certificate issued without its serial in the subject logs in only while the device holds one such', async () => {
    const device = await newDevice();
    // A device provisioned before subjects named the serial: its row says its certificate names none.
    await t.database.db.update(lockDevices).set({ certificateSubjectSerial: false }).where(eq(lockDevices.id, device.deviceId));
    expect(await login(`CN=${device.deviceId}`)).toBe('allow');
    // A broker still sending the CN alone asks the same question.
    expect(await login(device.deviceId)).toBe('allow');
    // Renewed: the new certificate names its serial, and the old one, naming none, is refused from then on.
    const renewed = await t.app.deviceCa.issueDeviceCertificate(await csrFor(device), device.deviceId);
    await t.database.db.update(lockDevices).set({ certificateSerial: renewed.serial, certificateSubjectSerial: true }).where(eq(lockDevices.id, device.deviceId));
    expect(await login(`CN=${device.deviceId}`)).toBe('deny');
    expect(await login(subjectOf(renewed.certificate))).toBe('allow');
  });

  it('reads the subject as RabbitMQ and EMQX write it, and nothing else', () => {
    const id = '0b9e3f2c-6a1d-4c55-9d0e-2f4b7a1c8e11';
    expect(parseBrokerName(`SERIALNUMBER=00AB12,CN=${id}`)).toEqual({ cn: id, serial: 'ab12' });
    expect(parseBrokerName(`CN=${id},2.5.4.5=ab12`)).toEqual({ cn: id, serial: 'ab12' });
    expect(parseBrokerName('CN=latchkey-service')).toEqual({ cn: 'latchkey-service', serial: null });
    expect(parseBrokerName(id)).toEqual({ cn: id, serial: null });
    for (const other of [`O=Evil,CN=${id}`, `CN=${id},CN=${id}`, `SERIALNUMBER=ab+CN=${id}`, `SERIALNUMBER=zz,CN=${id}`, `SERIALNUMBER=1,SERIALNUMBER=2,CN=${id}`, 'SERIALNUMBER=ab', '', `CN=${id}\\,O=x`]) {
      expect(parseBrokerName(other), other).toBeNull();
    }
  });

  it('the service logs in by its certificate’s name, which names no serial', async () => {
    expect(await login('CN=latchkey-service')).toBe('allow');
    expect(await login('SERIALNUMBER=ab12,CN=latchkey-service')).toBe('deny');
  });

  it('every question after the login decides by the certificate’s CN', async () => {
    const device = await newDevice();
    const subject = subjectOf(device.certificate);
    expect((await ask('vhost', { username: subject, vhost: '/', client_id: device.deviceId })).body).toBe('allow');
    expect((await topic(subject, `latchkey.d.${device.deviceId}.state`, 'write')).body).toBe('allow');
    expect((await ask('resource', { username: subject, vhost: '/', resource: 'queue', name: `mqtt-subscription-${device.deviceId}qos1`, permission: 'configure' })).body).toBe('allow');
    expect((await ask('vhost', { username: `O=Evil,${subject}`, vhost: '/', client_id: device.deviceId })).body).toBe('deny');
    expect((await topic('CN=latchkey-service', 'latchkey.d.*.presence', 'read')).body).toBe('allow');
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
