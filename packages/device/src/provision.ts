// @peculiar/x509 describes ASN.1 with decorators that read their metadata at import time.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { provisioningResponseSchema, type ProvisioningResponse } from '@latchkey/contract';
import { UserError, type DeviceIdentity, type StateDir } from './state-dir.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

export interface KeyAndCsr {
  /** PKCS#8 PEM: stays on the device. */
  privateKeyPem: string;
  /** PKCS#10 PEM: what the platform certifies. */
  csrPem: string;
}

/**
 * A fresh ECDSA P-256 key made on the device and a certificate request signed with it. The subject is
 * empty at provisioning (the platform names the device `CN=<deviceId>`) and `CN=<deviceId>` on renewal.
 */
export async function createKeyAndCsr(deviceId?: string): Promise<KeyAndCsr> {
  const keys = (await webcrypto.subtle.generateKey(P256, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: deviceId ? `CN=${deviceId}` : '', keys, signingAlgorithm: SIGNING });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { privateKeyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), csrPem: csr.toString('pem') };
}

/** Stores what provisioning returned beside the key it certifies; the key file is readable by its owner only. */
export async function saveProvisioning(state: StateDir, response: ProvisioningResponse, privateKeyPem: string, apiUrl: string): Promise<DeviceIdentity> {
  const [deviceCa, platformCa] = response.caCertificates;
  if (!deviceCa || !platformCa) throw new UserError('The platform sent no device CA and platform CA: is this a Latchkey API?');
  const identity: DeviceIdentity = { deviceId: response.deviceId, lockId: response.lockId, mqttUrl: response.mqttUrl, topicPrefix: response.topicPrefix, apiUrl };
  await state.write('key', privateKeyPem, 0o600);
  await state.write('certificate', response.certificate);
  await state.write('deviceCa', deviceCa);
  await state.write('platformCa', platformCa);
  // Readable by the device's user alone, like the key; never printed.
  if (response.offlineCodeSecret) await state.write('offlineCodeSecret', response.offlineCodeSecret, 0o600);
  else await state.remove('offlineCodeSecret');
  // A new binding starts from nothing: the old lock's config, used operations and event chain do not apply.
  await Promise.all([
    state.remove('config'),
    state.remove('replay'),
    state.remove('replayJournal'),
    state.remove('pendingKey'),
    state.remove('events'),
    state.remove('eventChain'),
    state.remove('keypad'),
  ]);
  await state.write('identity', `${JSON.stringify(identity, null, 2)}\n`);
  return identity;
}

export interface ProvisionOptions {
  /** The API base with its prefix, e.g. http://localhost:3000/api. */
  apiUrl: string;
  code: string;
  state: StateDir;
}

/** Makes a key, sends only its CSR with the code to `POST <apiUrl>/device-provisioning`, and stores the answer. */
export async function provision({ apiUrl, code, state }: ProvisionOptions): Promise<DeviceIdentity> {
  let base: URL;
  try {
    base = new URL(apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`);
  } catch {
    throw new UserError(`--api must be a URL such as https://latchkey.example.com/api (got ${apiUrl})`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UserError('--api must be an http:// or https:// URL');
  const { privateKeyPem, csrPem } = await createKeyAndCsr();
  let answer: Response;
  try {
    answer = await fetch(new URL('device-provisioning', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ code, csr: csrPem }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new UserError(`Could not reach ${base.origin}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  const body: unknown = await answer.json().catch(() => null);
  if (!answer.ok) {
    const message = body && typeof body === 'object' && 'message' in body ? String(body.message) : answer.statusText;
    throw new UserError(`Provisioning was refused (${answer.status}): ${message}`);
  }
  const parsed = provisioningResponseSchema.safeParse(body);
  if (!parsed.success) throw new UserError(`The answer from ${base.href}device-provisioning is not a provisioning result: is --api the API's base URL?`);
  return saveProvisioning(state, parsed.data, privateKeyPem, base.href.replace(/\/$/, ''));
}
