import {
  CERTIFICATE_LIFETIME_DAYS,
  CERTIFICATE_MIN_REMAINING_DAYS,
  type CertificateResponse,
} from '@latchkey/contract';
import type { DeviceKeyStore } from './device-key-store';
import { exportPublicKey, generateSigningKey } from './signed-operation';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Like the platform's SDKs: register again once the leaf has fewer than 7 of its 30 days left. */
const CERTIFICATE_RENEW_AFTER_MS = (CERTIFICATE_LIFETIME_DAYS - CERTIFICATE_MIN_REMAINING_DAYS) * DAY_MS;

export interface CertifiedKey {
  privateKey: CryptoKey;
  certificateChain: string[];
  userId: string;
}

interface Options {
  nowMs?: number;
  /** Register the key again even though the stored certificate looks fresh (the server refused it). */
  renew?: boolean;
}

/**
 * The signed-in user's signing key with a current certificate: generated once and kept in `store`,
 * certified through `certify` (POST /auth/certificate) when it has no certificate, an ageing one, or
 * when asked to renew.
 */
export async function getCertifiedKey(
  owner: string,
  store: DeviceKeyStore,
  /** Gets the private key too: a password account's new key proves itself by signing an emailed code. */
  certify: (ephemeralKey: string, privateKey: CryptoKey) => Promise<CertificateResponse>,
  { nowMs = Date.now(), renew = false }: Options = {},
): Promise<CertifiedKey> {
  let record = await store.get(owner);
  if (!record) {
    const pair = await generateSigningKey();
    record = {
      privateKey: pair.privateKey,
      publicKey: await exportPublicKey(pair.publicKey),
      certificate: null,
    };
    await store.put(owner, record);
  }
  const current = record.certificate;
  if (current && !renew && nowMs - current.issuedAtMs < CERTIFICATE_RENEW_AFTER_MS) {
    return { privateKey: record.privateKey, certificateChain: current.chain, userId: current.userId };
  }
  const issued = await certify(record.publicKey, record.privateKey);
  await store.put(owner, {
    ...record,
    certificate: { chain: issued.certificateChain, userId: issued.userId, issuedAtMs: nowMs },
  });
  return { privateKey: record.privateKey, certificateChain: issued.certificateChain, userId: issued.userId };
}
