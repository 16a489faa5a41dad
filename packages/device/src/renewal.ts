import { X509Certificate, createPrivateKey } from 'node:crypto';
import { DEVICE_RENEW_BEFORE_DAYS } from '@latchkey/contract';

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
