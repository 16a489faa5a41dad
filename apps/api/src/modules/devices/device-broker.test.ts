import 'reflect-metadata';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as x509 from '@peculiar/x509';
import mqtt from 'mqtt';
import { eq } from 'drizzle-orm';
import { deviceTopic, MAX_DEVICE_CONNECTIONS, MAX_DEVICE_MESSAGE_BYTES, MAX_DEVICE_SUBSCRIPTIONS } from '@latchkey/contract';
import { lockDevices } from '../../db/schema.js';
import { MAX_PENDING_CONNECTS } from '../../plugins/mqtt/embedded.js';
import { createTestApp, eventually, type TestApp } from '../../../test/helpers.js';
import { closed, connectMqtt, createCsr, deviceTls, generateDeviceKey, subscribeNext, provisionDevice, type ProvisionedDevice } from '../../../test/fixtures/devices.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

let t: TestApp;
let port: number;
let owner: Awaited<ReturnType<typeof createOwner>>;
let applicationId: string;
/** Every message on a device topic the service received, in order. */
const received: { topic: string; payload: string }[] = [];

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId);
  await t.app.deviceBus.subscribe('latchkey/d/#', (topic, payload) => received.push({ topic, payload: payload.toString() }));
});
afterAll(() => t.close());

const newDevice = async (): Promise<ProvisionedDevice & { lockId: string }> => {
  const lockId = await createLock(t, applicationId);
  return { ...(await provisionDevice(t, owner.token, applicationId, lockId)), lockId };
};
const refusal = (promise: Promise<unknown>) => promise.then(() => 'connected', (err: Error) => err.message);
const arrived = (topic: string, payload?: string) => received.some((m) => m.topic === topic && (payload === undefined || m.payload === payload));

describe('the embedded broker', () => {
  it('admits a device over mutual TLS with its certificate, and the service receives what it publishes', async () => {
    const device = await newDevice();
    expect(t.app.deviceBus.kind).toBe('embedded');
    const client = await connectMqtt(port, deviceTls(device));
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    expect(arrived(deviceTopic(device.deviceId, 'presence'), 'online')).toBe(true);
    // And the device receives what the service publishes to it.
    const operation = await subscribeNext(client, deviceTopic(device.deviceId, 'op'));
    await t.app.deviceBus.publish(deviceTopic(device.deviceId, 'op'), '{"requestId":"r0","jws":"x"}');
    expect((await operation.next).toString()).toContain('r0');
    // A late subscriber in the service is given the retained messages too.
    const late: string[] = [];
    await t.app.deviceBus.subscribe(deviceTopic(device.deviceId, 'presence'), (_topic, payload) => late.push(payload.toString()));
    expect(late).toEqual(['online']);
    await client.endAsync();
  });

  it('refuses a connection without a certificate, with one from another CA, or with a replaced device’s certificate', async () => {
    const device = await newDevice();
    const ca = device.caCertificates[0]!;
    expect(await refusal(connectMqtt(port, { ca }))).not.toBe('connected');

    const stranger = await generateDeviceKey();
    const selfSigned = await x509.X509CertificateGenerator.createSelfSigned({
      name: `CN=${device.deviceId}`,
      keys: stranger.keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    });
    expect(await refusal(connectMqtt(port, { ca, cert: selfSigned.toString('pem'), key: stranger.privateKeyPem }))).not.toBe('connected');

    // The lock gets a new device: the old certificate still chains to the CA but is revoked.
    const replacement = await provisionDevice(t, owner.token, applicationId, device.lockId);
    expect(await refusal(connectMqtt(port, deviceTls(device)))).toMatch(/not authorized/i);
    const client = await connectMqtt(port, deviceTls(replacement));
    await client.endAsync();
  });

  it('answers "server unavailable" (not "not authorized") when the device cannot be looked up, and admits it once it can', async () => {
    const device = await newDevice();
    const authority = (t.app.deviceBus as unknown as { authority: { isCurrentCertificate: (...args: unknown[]) => Promise<boolean> } }).authority;
    const spy = vi.spyOn(authority, 'isCurrentCertificate').mockRejectedValueOnce(new Error('connection timeout'));
    expect(await refusal(connectMqtt(port, deviceTls(device)))).toMatch(/server unavailable/i);
    spy.mockRestore();
    const client = await connectMqtt(port, deviceTls(device));
    await client.endAsync();
  });

  it('holds at most MAX_DEVICE_CONNECTIONS connections of one device; one more is told to try again, and a reconnect under a held client id replaces its connection', async () => {
    const device = await newDevice();
    const clients = [];
    for (let i = 0; i < MAX_DEVICE_CONNECTIONS; i++) clients.push(await connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-${i}` }));
    expect(await refusal(connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-extra` }))).toMatch(/server unavailable/i);
    // The same client id again takes over its own connection.
    const replaced = closed(clients[0]!);
    clients[0] = await connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-0` });
    await replaced;
    // Another device is not affected by this one's cap.
    const other = await newDevice();
    await (await connectMqtt(port, deviceTls(other))).endAsync();
    await clients.pop()!.endAsync();
    clients.push(await connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-extra` }));
    await Promise.all(clients.map((client) => client.endAsync()));
  });

  it('closes a connection on arrival while MAX_PENDING_CONNECTS are in their handshake, and admits devices again once those end', async () => {
    const device = await newDevice();
    // Connections that never start their TLS handshake hold the broker's pending places.
    const stalled = await Promise.all(
      Array.from({ length: MAX_PENDING_CONNECTS }, () => new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
      })),
    );
    const handshaking = () => (t.app.deviceBus as unknown as { handshaking: Map<string, unknown> }).handshaking.size;
    expect(await eventually(() => handshaking() === MAX_PENDING_CONNECTS)).toBe(true);
    expect(await refusal(connectMqtt(port, deviceTls(device)))).not.toBe('connected');
    for (const socket of stalled) socket.destroy();
    expect(await eventually(() => handshaking() === 0)).toBe(true);
    const client = await connectMqtt(port, deviceTls(device));
    await client.endAsync();
  });

  it('grants a device at most MAX_DEVICE_SUBSCRIPTIONS subscriptions over its connections; a filter held already is granted again', async () => {
    const device = await newDevice();
    const [first, second] = [await connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-a` }), await connectMqtt(port, { ...deviceTls(device), clientId: `${device.deviceId}-b` })];
    const filter = (i: number) => `latchkey/d/${device.deviceId}/x${i}`;
    const half = MAX_DEVICE_SUBSCRIPTIONS / 2;
    for (let i = 0; i < half; i++) await first.subscribeAsync(filter(i), { qos: 1 });
    for (let i = half; i < MAX_DEVICE_SUBSCRIPTIONS; i++) await second.subscribeAsync(filter(i), { qos: 1 });
    expect(await refusal(second.subscribeAsync(filter(MAX_DEVICE_SUBSCRIPTIONS), { qos: 1 }))).toMatch(/subscribe error/i);
    expect(await refusal(first.subscribeAsync([filter(1000), filter(1001)], { qos: 1 }))).toMatch(/subscribe error/i);
    expect(await first.subscribeAsync(filter(0), { qos: 1 })).toHaveLength(1);
    // One given up makes room for another.
    await first.unsubscribeAsync(filter(0));
    expect(await first.subscribeAsync(filter(MAX_DEVICE_SUBSCRIPTIONS), { qos: 1 })).toHaveLength(1);
    await Promise.all([first.endAsync(), second.endAsync()]);
  });

  it('refuses a publish outside the device’s own topics: it reaches no subscriber and the connection is closed', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const client = await connectMqtt(port, deviceTls(device));
    const cut = closed(client);
    client.publish(deviceTopic(other.deviceId, 'state'), '{"forged":true}', { qos: 1 });
    await cut;
    // Its own config is the platform's to publish, not the device's.
    const again = await connectMqtt(port, deviceTls(device));
    const cutAgain = closed(again);
    again.publish(deviceTopic(device.deviceId, 'config'), 'forged', { qos: 1 });
    await cutAgain;
    expect(arrived(deviceTopic(other.deviceId, 'state'))).toBe(false);
    expect(arrived(deviceTopic(device.deviceId, 'config'), 'forged')).toBe(false);
  });

  it('lets a device subscribe only under its own prefix', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const snoop = await connectMqtt(port, deviceTls(device));
    for (const filter of [deviceTopic(other.deviceId, 'op'), 'latchkey/d/+/op', '#']) {
      expect(await refusal(snoop.subscribeAsync(filter, { qos: 1 })), filter).toMatch(/subscribe error/i);
    }
    expect(await snoop.subscribeAsync(`latchkey/d/${device.deviceId}/#`, { qos: 1 })).toHaveLength(1);
    const seen: string[] = [];
    snoop.on('message', (topic) => seen.push(topic));
    const target = await connectMqtt(port, deviceTls(other));
    const delivered = await subscribeNext(target, deviceTopic(other.deviceId, 'op'));
    await t.app.deviceBus.publish(deviceTopic(other.deviceId, 'op'), '{"requestId":"r1","jws":"x"}');
    expect((await delivered.next).toString()).toContain('r1');
    expect(seen).toEqual([]);
    await Promise.all([snoop.endAsync(), target.endAsync()]);
  });

  it('cuts an unbound device’s live connection at once, publishing its Last Will', async () => {
    const device = await newDevice();
    const client = await connectMqtt(port, {
      ...deviceTls(device),
      will: { topic: deviceTopic(device.deviceId, 'presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    await t.app.deviceBus.publish(deviceTopic(device.deviceId, 'config'), 'config-jws', { retain: true });
    const cut = closed(client);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${applicationId}/lock/${device.lockId}/device`, headers: bearer(owner.token) });
    expect(res.statusCode).toBe(204);
    await cut;
    expect(await eventually(() => arrived(deviceTopic(device.deviceId, 'presence'), 'offline'))).toBe(true);
    expect(await refusal(connectMqtt(port, deviceTls(device)))).toMatch(/not authorized/i);
    // Its retained config (the lock's users) is gone from the broker.
    const retained: string[] = [];
    await t.app.deviceBus.subscribe(deviceTopic(device.deviceId, 'config'), (_topic, payload) => retained.push(payload.toString()));
    expect(retained).toEqual([]);
  });

  /** Deleting what owns a device must cut it off exactly as an unbind does. */
  const expectUnbound = async (device: ProvisionedDevice, remove: () => Promise<{ statusCode: number }>) => {
    const client = await connectMqtt(port, deviceTls(device));
    await t.app.deviceBus.publish(deviceTopic(device.deviceId, 'config'), 'config-jws with the lock’s users', { retain: true });
    let open = true;
    client.once('close', () => (open = false));
    expect((await remove()).statusCode).toBe(204);
    const crl = new x509.X509Crl((await t.app.inject({ method: 'GET', url: '/api/device-ca/crl.pem' })).body);
    expect(crl.entries.map((e) => e.serialNumber.toLowerCase())).toContain(new x509.X509Certificate(device.certificate).serialNumber.toLowerCase());
    expect(await eventually(() => !open)).toBe(true);
    expect(await refusal(connectMqtt(port, deviceTls(device)))).toMatch(/not authorized/i);
    const retained = async () => {
      const held: string[] = [];
      await t.app.deviceBus.subscribe(deviceTopic(device.deviceId, 'config'), (_topic, payload) => held.push(payload.toString()));
      return held;
    };
    expect(await eventually(async () => (await retained()).length === 0)).toBe(true);
  };

  it('deleting a lock unbinds its device: cut off, its retained config cleared, its certificate in the CRL', async () => {
    const device = await newDevice();
    await expectUnbound(device, () => t.app.inject({ method: 'DELETE', url: `/api/platform/application/${applicationId}/lock/${device.lockId}`, headers: bearer(owner.token) }));
  });

  it('deleting an application unbinds the devices of its locks: cut off, retained configs cleared, certificates in the CRL', async () => {
    const doomed = await createApplication(t, owner.userId);
    const device = await provisionDevice(t, owner.token, doomed, await createLock(t, doomed));
    await expectUnbound(device, () => t.app.inject({ method: 'DELETE', url: `/api/platform/application/${doomed}`, headers: bearer(owner.token) }));
  });

  it('deleting another application’s lock through this application leaves its device bound', async () => {
    const device = await newDevice();
    const stranger = await createOwner(t);
    const theirs = await createApplication(t, stranger.userId);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/platform/application/${theirs}/lock/${device.lockId}`, headers: bearer(stranger.token) });
    expect(res.statusCode).toBe(404);
    const client = await connectMqtt(port, deviceTls(device));
    await client.endAsync();
  });

  it('keeps, of the direct-access endpoints a device announces, only private-network ones and its own address', async () => {
    const device = await newDevice();
    const client = await connectMqtt(port, deviceTls(device));
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    // The test device connects from 127.0.0.1: that is its own address, which loopback otherwise is not.
    const announced = ['http://192.168.1.20:8080/execute', 'https://evil.example.com/execute', 'http://203.0.113.5/execute', 'http://127.0.0.1:8080/execute'];
    await client.publishAsync(deviceTopic(device.deviceId, 'state'), JSON.stringify({ locked: true, firmware: 'test 1', at: new Date().toISOString(), directAccessEndpoints: announced }), { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row!.state?.directAccessEndpoints).toEqual(['http://192.168.1.20:8080/execute', 'http://127.0.0.1:8080/execute']);
    // What the service's subscribers hear (every instance's) is the message with those endpoints only.
    const heard = received.filter((m) => m.topic === deviceTopic(device.deviceId, 'state')).at(-1);
    expect(JSON.parse(heard!.payload).directAccessEndpoints).toEqual(row!.state?.directAccessEndpoints);
    await client.endAsync();
  });

  it('drops an oversized message and closes its sender; the broker keeps serving the others', async () => {
    const [big, small] = [await newDevice(), await newDevice()];
    const bystander = await connectMqtt(port, deviceTls(small));
    for (const bytes of [MAX_DEVICE_MESSAGE_BYTES + 1, 4 * 1024 * 1024]) {
      const client = await connectMqtt(port, deviceTls(big));
      const cut = closed(client);
      client.publish(deviceTopic(big.deviceId, 'state'), Buffer.alloc(bytes, 0x61), { qos: 1 });
      await cut;
    }
    await bystander.publishAsync(deviceTopic(small.deviceId, 'state'), 'still here', { qos: 1 });
    expect(arrived(deviceTopic(small.deviceId, 'state'), 'still here')).toBe(true);
    expect(arrived(deviceTopic(big.deviceId, 'state'))).toBe(false);
    await bystander.endAsync();
  });

  it('renews a device’s certificate over MQTT: a CSR on …/renew, the certificate on …/certificate', async () => {
    const device = await newDevice();
    // Renewal is for a certificate near its end: one issued within the last minute is not renewed again.
    await t.database.db.update(lockDevices).set({ certificateNotAfter: new Date(Date.now() + 20 * 86_400_000) }).where(eq(lockDevices.id, device.deviceId));
    const client = await connectMqtt(port, deviceTls(device));
    const answer = await subscribeNext(client, deviceTopic(device.deviceId, 'certificate'));
    const key = await generateDeviceKey('ed25519');
    await client.publishAsync(deviceTopic(device.deviceId, 'renew'), await createCsr(key, `CN=${device.deviceId}`), { qos: 1 });
    const { certificate } = JSON.parse((await answer.next).toString()) as { certificate: string };
    const renewed = new x509.X509Certificate(certificate);
    expect(renewed.subject).toBe(`CN=${device.deviceId}, 2.5.4.5=${renewed.serialNumber.toLowerCase()}`);
    const [row] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, device.deviceId));
    expect(row!.certificateSerial).toBe(renewed.serialNumber.toLowerCase());
    expect(row!.certificateSubjectSerial).toBe(true);
    // The new certificate connects; the old one still does during its grace.
    const fresh = await connectMqtt(port, deviceTls({ ...device, certificate, key }));
    await Promise.all([fresh.endAsync(), client.endAsync()]);
    const old = await connectMqtt(port, deviceTls(device));
    await old.endAsync();
  });

  it('checks the once-a-minute renewal rule before the CA signs: a second CSR within the minute costs no signature', async () => {
    const device = await newDevice();
    await t.database.db.update(lockDevices).set({ certificateNotAfter: new Date(Date.now() + 20 * 86_400_000) }).where(eq(lockDevices.id, device.deviceId));
    const signed = vi.spyOn(t.app.deviceCa, 'issueDeviceCertificate');
    const logged = vi.spyOn(t.app.log, 'info');
    try {
      const client = await connectMqtt(port, deviceTls(device));
      const answer = await subscribeNext(client, deviceTopic(device.deviceId, 'certificate'));
      const csr = await createCsr(await generateDeviceKey('ed25519'), `CN=${device.deviceId}`);
      await client.publishAsync(deviceTopic(device.deviceId, 'renew'), csr, { qos: 1 });
      await answer.next;
      expect(signed).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 5; i++) await client.publishAsync(deviceTopic(device.deviceId, 'renew'), csr, { qos: 1 });
      const refusals = () => logged.mock.calls.filter(([fields, message]) => message?.toString().includes('renewed within the minute') && (fields as { deviceId?: string }).deviceId === device.deviceId).length;
      expect(await eventually(() => refusals() === 5)).toBe(true);
      expect(signed).toHaveBeenCalledTimes(1);
      await client.endAsync();
    } finally {
      signed.mockRestore();
      logged.mockRestore();
    }
  });

  it('refuses MQTT over WebSocket without a device certificate beneath it', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = mqtt.connect(`${address.replace('http', 'ws')}/mqtt`, { reconnectPeriod: 0, protocolVersion: 4 });
    const refused = await new Promise<string>((resolve) => {
      client.once('connect', () => resolve('connected'));
      client.once('error', (err) => resolve(err.message));
    });
    client.end(true);
    expect(refused).toMatch(/not authorized/i);
  });
});
