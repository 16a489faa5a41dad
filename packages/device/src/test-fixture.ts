// @peculiar/x509 describes ASN.1 with decorators that read their metadata at import time.
import 'reflect-metadata';
import { createPrivateKey, randomBytes, randomUUID, sign, webcrypto, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { DeviceConfig, DeviceConfigUser } from '@latchkey/contract';
import { PlatformTrust } from './trust.js';

/**
 * A platform CA and lock users made the way the platform makes them (an Ed25519 CA, user leaves with
 * subject `CN=<user id>, O=Latchkey`, chains as standard base64 DER, leaf first), and operations and
 * configs signed with them, for the tests.
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const ED25519 = { name: 'Ed25519' };
const DAY_MS = 86_400_000;

export interface TestCa {
  trust: PlatformTrust;
  pem: string;
  base64: string;
  signingKey: CryptoKey;
  privateKey: KeyObject;
  subject: string;
}

export interface TestUser {
  userId: string;
  chain: string[];
  privateKey: KeyObject;
}

const serial = () => randomBytes(8).toString('hex').replace(/^./, '1');
const toKeyObject = async (key: CryptoKey) => createPrivateKey({ key: Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)), format: 'der', type: 'pkcs8' });

export async function createTestCa(name = 'CN=Latchkey Test Platform CA, O=Latchkey'): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ED25519, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 365 * DAY_MS),
    keys,
    signingAlgorithm: ED25519,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  const der = Buffer.from(certificate.rawData);
  return { trust: new PlatformTrust(der), pem: certificate.toString('pem'), base64: der.toString('base64'), signingKey: keys.privateKey, privateKey: await toKeyObject(keys.privateKey), subject: name };
}

/** A leaf the CA issued, for `subject` (a user leaf by default), valid from `notBefore` to `notAfter` (epoch ms). */
export async function issueLeaf(
  ca: TestCa,
  options: { userId?: string; subject?: string; notBefore?: number; notAfter?: number; publicKey?: CryptoKey } = {},
): Promise<TestUser> {
  const userId = options.userId ?? randomUUID();
  const keys = (await webcrypto.subtle.generateKey(ED25519, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: options.subject ?? `CN=${userId}, O=Latchkey`,
    issuer: ca.subject,
    notBefore: new Date(options.notBefore ?? Date.now() - 60_000),
    notAfter: new Date(options.notAfter ?? Date.now() + 30 * DAY_MS),
    publicKey: options.publicKey ?? keys.publicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: ED25519,
  });
  return { userId, chain: [Buffer.from(leaf.rawData).toString('base64'), ca.base64], privateKey: await toKeyObject(keys.privateKey) };
}

const encode = (value: unknown, encoding: 'base64url' | 'base64') => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(encoding);

/** A compact JWS of `payload` under `header`, signed with Ed25519; `encoding` 'base64' is the older SDKs' padded form. */
export function signJws(header: unknown, payload: unknown, key: KeyObject, encoding: 'base64url' | 'base64' = 'base64url'): string {
  const input = `${encode(header, encoding)}.${encode(payload, encoding)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString(encoding)}`;
}

/** Claims of an unlock of `lockId` by `user`, valid now for 30 s; `extra` overrides any of them. */
export function unlockClaims(user: TestUser, lockId: string, nowMs = Date.now(), extra: Record<string, unknown> = {}) {
  const now = Math.floor(nowMs / 1000);
  return { iss: user.userId, sub: lockId, iat: now, nbf: now, exp: now + 30, jti: randomUUID(), operation: { type: 'MUTATE_LOCK', locked: false }, ...extra };
}

export function signOperation(user: TestUser, claims: unknown, header: Record<string, unknown> = {}, encoding: 'base64url' | 'base64' = 'base64url'): string {
  return signJws({ alg: 'EdDSA', typ: 'JWT', x5c: user.chain, ...header }, claims, user.privateKey, encoding);
}

/** A config signed by the CA key itself (x5c = [CA]), as the platform publishes it. */
export function signConfig(ca: TestCa, config: DeviceConfig): string {
  return signJws({ alg: 'EdDSA', x5c: [ca.base64] }, config, ca.privateKey);
}

export function configUser(user: TestUser, extra: Partial<DeviceConfigUser> = {}): DeviceConfigUser {
  return { userId: user.userId, publicKey: '', role: 'USER', start: null, end: null, ...extra };
}

export function testConfig(lockId: string, users: DeviceConfigUser[], extra: Partial<DeviceConfig> = {}): DeviceConfig {
  return { lockId, version: 1, unlockTime: 5, usageRequirements: {}, users, ...extra };
}

/** The platform's device CA: it certifies devices (`CN=<deviceId>`) and the broker. */
export async function createDeviceCa(): Promise<TestCa> {
  return createTestCa('CN=Latchkey Test Device CA, O=Latchkey');
}

/** A device certificate for the key of `csrPem`, as the platform issues it at provisioning and renewal. */
export async function certifyCsr(ca: TestCa, csrPem: string, deviceId: string, days = 90): Promise<string> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${deviceId}`,
    issuer: ca.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + days * DAY_MS),
    publicKey: await csr.publicKey.export(),
    signingKey: ca.signingKey,
    signingAlgorithm: ED25519,
  });
  return certificate.toString('pem');
}

/** A broker's TLS certificate and key from the device CA, for `host` (an IP address). */
export async function brokerCertificate(ca: TestCa, host = '127.0.0.1'): Promise<{ keyPem: string; certificatePem: string }> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${host}`,
    issuer: ca.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + DAY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: ED25519,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: host }])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), certificatePem: certificate.toString('pem') };
}
