import 'reflect-metadata';
import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyAndCsr, saveProvisioning } from './provision.js';
import { loadDevice, StateDir, UserError } from './state-dir.js';
import { certifyCsr, createDeviceCa, createTestCa } from './test-fixture.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
const tempState = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-provision-'));
  dirs.push(dir);
  return new StateDir(path.join(dir, 'state'));
};

describe('createKeyAndCsr', () => {
  it('makes an ECDSA P-256 key and a CSR signed by it, with no subject at provisioning', async () => {
    const { privateKeyPem, csrPem } = await createKeyAndCsr();
    const csr = new x509.Pkcs10CertificateRequest(csrPem);
    expect(await csr.verify()).toBe(true);
    expect(csr.subject).toBe('');
    const key = createPrivateKey(privateKeyPem);
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    // The CSR certifies exactly the key kept on the device.
    const csrKey = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
    expect(csrKey.export({ format: 'jwk' })).toEqual(createPublicKey(key).export({ format: 'jwk' }));
    expect(csrPem).not.toContain('PRIVATE KEY');
  });

  it('names the device on renewal, and makes a new key each time', async () => {
    const deviceId = randomUUID();
    const [first, second] = await Promise.all([createKeyAndCsr(deviceId), createKeyAndCsr(deviceId)]);
    expect(new x509.Pkcs10CertificateRequest(first.csrPem).subject).toBe(`CN=${deviceId}`);
    expect(first.privateKeyPem).not.toBe(second.privateKeyPem);
  });
});

describe('saveProvisioning and loadDevice', () => {
  it('stores the key readable by its owner only, the certificate, both CAs and who the device is', async () => {
    const state = await tempState();
    const [deviceCa, platformCa] = await Promise.all([createDeviceCa(), createTestCa()]);
    const deviceId = randomUUID();
    const lockId = randomUUID();
    const { privateKeyPem, csrPem } = await createKeyAndCsr();
    const certificate = await certifyCsr(deviceCa, csrPem, deviceId);
    const response = { deviceId, lockId, certificate, caCertificates: [deviceCa.pem, platformCa.pem], mqttUrl: 'mqtts://broker.example:8883', topicPrefix: `latchkey/d/${deviceId}` };
    await state.write('config', 'an old lock’s config');
    await saveProvisioning(state, response, privateKeyPem, 'https://latchkey.example/api');

    expect((await stat(state.file('key'))).mode & 0o777).toBe(0o600);
    expect((await stat(state.dir)).mode & 0o777).toBe(0o700);
    const files = await loadDevice(state);
    expect(files).toEqual({
      identity: { deviceId, lockId, mqttUrl: response.mqttUrl, topicPrefix: response.topicPrefix, apiUrl: 'https://latchkey.example/api' },
      keyPem: privateKeyPem,
      certificatePem: certificate,
      deviceCaPem: deviceCa.pem,
      platformCaPem: platformCa.pem,
      configJws: null,
      offlineCodeSecret: null,
    });
  });

  it('stores the offline-code secret readable by its owner only, and starts a new binding without the old event chain', async () => {
    const state = await tempState();
    const [deviceCa, platformCa] = await Promise.all([createDeviceCa(), createTestCa()]);
    const deviceId = randomUUID();
    const { privateKeyPem, csrPem } = await createKeyAndCsr();
    const secret = Buffer.alloc(32, 9).toString('base64url');
    const response = {
      deviceId,
      lockId: randomUUID(),
      certificate: await certifyCsr(deviceCa, csrPem, deviceId),
      caCertificates: [deviceCa.pem, platformCa.pem],
      mqttUrl: 'mqtts://broker.example:8883',
      topicPrefix: `latchkey/d/${deviceId}`,
      offlineCodeSecret: secret,
    };
    await state.write('events', 'an old binding’s event\n');
    await state.write('eventChain', '{"seq":7}');
    await saveProvisioning(state, response, privateKeyPem, 'https://latchkey.example/api');
    expect((await stat(state.file('offlineCodeSecret'))).mode & 0o777).toBe(0o600);
    expect((await loadDevice(state)).offlineCodeSecret).toBe(secret);
    expect(await state.read('events')).toBeNull();
    expect(await state.read('eventChain')).toBeNull();
    // A binding whose answer carries no secret keeps none from before.
    await saveProvisioning(state, { ...response, offlineCodeSecret: undefined }, privateKeyPem, 'https://latchkey.example/api');
    expect((await loadDevice(state)).offlineCodeSecret).toBeNull();
  });

  it('refuses an answer without both CAs, and says how to provision when nothing is stored', async () => {
    const state = await tempState();
    const response = { deviceId: 'd', lockId: 'l', certificate: '', caCertificates: ['only one'], mqttUrl: '', topicPrefix: '' };
    await expect(saveProvisioning(state, response, '', '')).rejects.toThrow(UserError);
    await expect(loadDevice(state)).rejects.toThrow(/not provisioned.*latchkey-device provision/);
  });
});
