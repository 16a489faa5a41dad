import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '@peculiar/x509';
import { eq } from 'drizzle-orm';
import { deviceErrors, deviceStatusSchema, deviceTopicPrefix, PROVISIONING_CODE_TTL_S } from '@latchkey/contract';
import { lockDevices, revokedDeviceCertificates } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { createCsr, createDevice, generateDeviceKey, provisionDevice } from '../../../test/fixtures/devices.js';
import { createLock } from '../../../test/fixtures/operations.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;
let applicationId: string;

beforeAll(async () => {
  t = await createTestApp({ MQTT_PUBLIC_URL: 'mqtts://locks.example.com:8883' });
  owner = await createOwner(t);
  applicationId = await createApplication(t, owner.userId);
});
afterAll(() => t.close());

const deviceUrl = (lockId: string, app = applicationId) => `/api/platform/application/${app}/lock/${lockId}/device`;
const provision = (code: string, csr: string) => t.app.inject({ method: 'POST', url: '/api/device-provisioning', payload: { code, csr } });
const serialsRevoked = async () => (await t.database.db.select({ serial: revokedDeviceCertificates.serial }).from(revokedDeviceCertificates)).map((r) => r.serial);

describe('provisioning a device', () => {
  it('turns a code and a CSR for the device’s own key into a client certificate for CN=<deviceId>, 90 days', async () => {
    const lockId = await createLock(t, applicationId);
    const created = await createDevice(t, owner.token, applicationId, lockId);
    expect(created.provisioningCode).toMatch(/^[A-Z2-9]{5}-[A-Z2-9]{5}$/);
    expect(created.expiresAt).toBeGreaterThan(Date.now() / 1000 + PROVISIONING_CODE_TTL_S - 10);
    const [stored] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, created.deviceId));
    expect(stored!.codeHash).not.toContain(created.provisioningCode);

    const key = await generateDeviceKey('p256');
    // Typed as a person might: lower case, without the dash.
    const res = await provision(created.provisioningCode.toLowerCase().replace('-', ''), await createCsr(key));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ deviceId: created.deviceId, lockId, mqttUrl: 'mqtts://locks.example.com:8883', topicPrefix: deviceTopicPrefix(created.deviceId) });
    const certificate = new x509.X509Certificate(body.certificate);
    const ca = new x509.X509Certificate(body.caCertificates[0]);
    // The subject names the certificate's own serial too: a clustered broker passes the platform the subject alone.
    expect(certificate.subject).toBe(`CN=${created.deviceId}, 2.5.4.5=${certificate.serialNumber.toLowerCase()}`);
    expect(await certificate.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
    expect(Buffer.from(certificate.publicKey.rawData)).toEqual(Buffer.from(await crypto.subtle.exportKey('spki', key.keys.publicKey)));
    const days = (certificate.notAfter.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89);
    expect(days).toBeLessThan(91);
    expect(certificate.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(body.caCertificates).toHaveLength(2);
    expect(new x509.X509Certificate(body.caCertificates[1]).subject).toContain('Platform CA');

    const status = await t.app.inject({ method: 'GET', url: deviceUrl(lockId), headers: bearer(owner.token) });
    expect(status.statusCode).toBe(200);
    expect(deviceStatusSchema.parse(status.json())).toEqual({ deviceId: created.deviceId, provisioned: true, connected: false, lastSeen: null, firmware: null, locked: null, codeExpiresAt: null });
  });

  it('accepts an Ed25519 key, with or without the subject CN=<deviceId>', async () => {
    const lockId = await createLock(t, applicationId);
    const device = await provisionDevice(t, owner.token, applicationId, lockId, 'ed25519');
    expect(new x509.X509Certificate(device.certificate).publicKey.algorithm.name).toBe('Ed25519');
  });

  it('takes a code once: used, unknown or expired → 400, and nothing changes', async () => {
    const lockId = await createLock(t, applicationId);
    const created = await createDevice(t, owner.token, applicationId, lockId);
    const key = await generateDeviceKey();
    expect((await provision(created.provisioningCode, await createCsr(key))).statusCode).toBe(200);
    const [before] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, created.deviceId));

    const reused = await provision(created.provisioningCode, await createCsr(key));
    expect(reused.statusCode).toBe(400);
    expect(reused.json().message).toBe(deviceErrors.codeInvalid);
    const unknown = await provision('ABCDE-FGHJK', await createCsr(key));
    expect(unknown.json()).toMatchObject({ code: 400, message: deviceErrors.codeInvalid });

    const other = await createLock(t, applicationId);
    const expiring = await createDevice(t, owner.token, applicationId, other);
    await t.database.db.update(lockDevices).set({ codeExpiresAt: new Date(Date.now() - 1000) }).where(eq(lockDevices.id, expiring.deviceId));
    expect((await provision(expiring.provisioningCode, await createCsr(key))).json()).toMatchObject({ code: 400, message: deviceErrors.codeInvalid });

    const [after] = await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, created.deviceId));
    expect(after!.certificateSerial).toBe(before!.certificateSerial);
  });

  it('spends a code exactly once when two devices race with it', async () => {
    const lockId = await createLock(t, applicationId);
    const created = await createDevice(t, owner.token, applicationId, lockId);
    const csrs = await Promise.all([1, 2, 3].map(async () => createCsr(await generateDeviceKey())));
    const answers = await Promise.all(csrs.map((csr) => provision(created.provisioningCode, csr)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('refuses a CSR for an RSA key, one not signed by its key, or one naming another subject → 400, code still usable', async () => {
    const lockId = await createLock(t, applicationId);
    const created = await createDevice(t, owner.token, applicationId, lockId);
    const rsa = await provision(created.provisioningCode, await createCsr(await generateDeviceKey('rsa')));
    expect(rsa.json()).toMatchObject({ code: 400, message: deviceErrors.csrInvalid });
    expect((await provision(created.provisioningCode, 'not a csr')).json()).toMatchObject({ code: 400, message: deviceErrors.csrInvalid });

    const key = await generateDeviceKey();
    const pem = await createCsr(key, `CN=${created.deviceId}`);
    const der = Buffer.from(x509.PemConverter.decodeFirst(pem));
    const last = der.length - 3; // the last bytes are the signature's
    der[last] = der[last]! ^ 0xff;
    const tampered = await provision(created.provisioningCode, x509.PemConverter.encode(der, 'CERTIFICATE REQUEST'));
    expect(tampered.json()).toMatchObject({ code: 400, message: deviceErrors.csrInvalid });

    for (const subject of ['CN=00000000-0000-4000-8000-000000000000', `CN=${created.deviceId}, O=Evil`, 'O=Latchkey']) {
      const foreign = await provision(created.provisioningCode, await createCsr(key, subject));
      expect(foreign.json(), subject).toMatchObject({ code: 400, message: deviceErrors.csrSubject });
    }
    expect((await provision(created.provisioningCode, pem)).statusCode).toBe(200);
  });
});

describe('the owner’s device routes', () => {
  it('are the same 404 for another owner’s application or lock, and 404 noDevice for a lock without one', async () => {
    const lockId = await createLock(t, applicationId);
    const stranger = await createOwner(t);
    const theirApplication = await createApplication(t, stranger.userId);
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      expect((await t.app.inject({ method, url: deviceUrl(lockId), headers: bearer(stranger.token) })).statusCode, method).toBe(404);
      expect((await t.app.inject({ method, url: deviceUrl(lockId, theirApplication), headers: bearer(stranger.token) })).statusCode, method).toBe(404);
    }
    expect(await t.database.db.select().from(lockDevices).where(eq(lockDevices.lockId, lockId))).toEqual([]);
    const none = await t.app.inject({ method: 'GET', url: deviceUrl(lockId), headers: bearer(owner.token) });
    expect(none.json()).toMatchObject({ code: 404, message: deviceErrors.noDevice });
    expect((await t.app.inject({ method: 'DELETE', url: deviceUrl(lockId), headers: bearer(owner.token) })).json()).toMatchObject({ code: 404, message: deviceErrors.noDevice });
    expect((await t.app.inject({ method: 'GET', url: deviceUrl(lockId) })).statusCode).toBe(401);
  });

  it('shows a waiting code’s expiry until the device uses it', async () => {
    const lockId = await createLock(t, applicationId);
    const created = await createDevice(t, owner.token, applicationId, lockId);
    const status = (await t.app.inject({ method: 'GET', url: deviceUrl(lockId), headers: bearer(owner.token) })).json();
    expect(status).toMatchObject({ deviceId: created.deviceId, provisioned: false, codeExpiresAt: created.expiresAt });
  });

  it('replaces the device with a new one (the old certificate revoked), and unbinding revokes and removes it', async () => {
    const lockId = await createLock(t, applicationId);
    const first = await provisionDevice(t, owner.token, applicationId, lockId);
    const firstSerial = new x509.X509Certificate(first.certificate).serialNumber.toLowerCase();
    const second = await provisionDevice(t, owner.token, applicationId, lockId);
    expect(second.deviceId).not.toBe(first.deviceId);
    expect(await serialsRevoked()).toContain(firstSerial);
    const status = (await t.app.inject({ method: 'GET', url: deviceUrl(lockId), headers: bearer(owner.token) })).json();
    expect(status.deviceId).toBe(second.deviceId);

    const removed = await t.app.inject({ method: 'DELETE', url: deviceUrl(lockId), headers: bearer(owner.token) });
    expect(removed.statusCode).toBe(204);
    expect(await serialsRevoked()).toContain(new x509.X509Certificate(second.certificate).serialNumber.toLowerCase());
    expect((await t.app.inject({ method: 'GET', url: deviceUrl(lockId), headers: bearer(owner.token) })).statusCode).toBe(404);

    const history = (await t.app.inject({ method: 'GET', url: `/api/platform/application/${applicationId}/history`, headers: bearer(owner.token) })).json();
    const deviceChanges = history.items.flatMap((entry: { changes: { field: string; before: unknown; after: unknown }[] }) => entry.changes).filter((c: { field: string }) => c.field === 'device');
    expect(deviceChanges).toContainEqual({ field: 'device', before: second.deviceId, after: null });
    expect(deviceChanges).toContainEqual({ field: 'device', before: first.deviceId, after: second.deviceId });
  });

  it('publishes the CRL of every revoked certificate, signed by the device CA', async () => {
    const lockId = await createLock(t, applicationId);
    const device = await provisionDevice(t, owner.token, applicationId, lockId);
    await t.app.inject({ method: 'DELETE', url: deviceUrl(lockId), headers: bearer(owner.token) });
    const res = await t.app.inject({ method: 'GET', url: '/api/device-ca/crl.pem' });
    expect(res.statusCode).toBe(200);
    const crl = new x509.X509Crl(res.body);
    const ca = new x509.X509Certificate((await t.app.inject({ method: 'GET', url: '/api/device-ca/certificate.pem' })).body);
    expect(await crl.verify({ publicKey: ca.publicKey })).toBe(true);
    expect(crl.issuer).toBe(ca.subject);
    const listed = crl.entries.map((e) => e.serialNumber.toLowerCase());
    expect(listed).toContain(new x509.X509Certificate(device.certificate).serialNumber.toLowerCase());
    expect(listed.sort()).toEqual((await serialsRevoked()).sort());
  });
});
