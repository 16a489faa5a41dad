import { X509Certificate, createPrivateKey } from 'node:crypto';
import { DEVICE_RENEW_BEFORE_DAYS, deviceCertificateMessageSchema } from '@latchkey/contract';
import { createKeyAndCsr } from './provision.js';
import type { DeviceFiles, StateDir } from './state-dir.js';

const DAY_MS = 86_400_000;

/** Whether a certificate (PEM) has less than the renewal margin left at `nowMs`; an unreadable one needs renewing too. */
export function needsRenewal(certificatePem: string, nowMs: number): boolean {
  try {
    return Date.parse(new X509Certificate(certificatePem).validTo) - nowMs < DEVICE_RENEW_BEFORE_DAYS * DAY_MS;
  } catch {
    return true;
  }
}

/**
 * Checks a certificate the platform sent on `…/certificate` before it replaces the one in use: issued by
 * the device CA, valid now, for this device (`CN=<deviceId>`), and for the key the device holds. Returns
 * null when it may be used, or why not.
 */
export function certificateProblem(certificatePem: string, { deviceCaPem, deviceId, keyPem, nowMs }: { deviceCaPem: string; deviceId: string; keyPem: string; nowMs: number }): string | null {
  let certificate: X509Certificate;
  let ca: X509Certificate;
  try {
    certificate = new X509Certificate(certificatePem);
    ca = new X509Certificate(deviceCaPem);
  } catch {
    return 'not a PEM certificate';
  }
  if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey)) return 'not issued by the device CA';
  if (nowMs < Date.parse(certificate.validFrom) || nowMs > Date.parse(certificate.validTo)) return 'not valid now';
  if (!/^CN=([^\n]+)$/m.test(certificate.subject) || /^CN=([^\n]+)$/m.exec(certificate.subject)?.[1] !== deviceId) return `not for ${deviceId}`;
  if (!certificate.checkPrivateKey(createPrivateKey(keyPem))) return 'not for the key this device holds';
  return null;
}

/** A new key, kept aside until its certificate arrives, and the CSR (PEM) to publish on `…/renew`. */
export async function requestRenewal(state: StateDir, deviceId: string): Promise<string> {
  const { privateKeyPem, csrPem } = await createKeyAndCsr(deviceId);
  await state.write('pendingKey', privateKeyPem, 0o600);
  return csrPem;
}

/**
 * Takes a `…/certificate` message: the certificate replaces the one in use when it is for the key made
 * for the renewal (which then becomes the device's key) or for the key in use. Returns why not, or null.
 */
export async function acceptCertificate(state: StateDir, files: DeviceFiles, text: string): Promise<string | null> {
  let certificate: string;
  try {
    certificate = deviceCertificateMessageSchema.parse(JSON.parse(text)).certificate;
  } catch {
    return 'the message must be {certificate}';
  }
  const pendingKey = await state.read('pendingKey');
  const context = { deviceCaPem: files.deviceCaPem, deviceId: files.identity.deviceId, nowMs: Date.now() };
  const forPending = pendingKey !== null && certificateProblem(certificate, { ...context, keyPem: pendingKey }) === null;
  const problem = forPending ? null : certificateProblem(certificate, { ...context, keyPem: files.keyPem });
  if (problem) return problem;
  await state.write('certificate', certificate);
  if (forPending) await state.promotePendingKey();
  return null;
}
