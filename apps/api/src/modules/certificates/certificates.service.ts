import { operationErrors, type CertificateResponse } from '@latchkey/contract';
import { badRequest } from '../../errors.js';
import { readEphemeralKey, type PlatformCa } from '../../plugins/platform-ca.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';

/**
 * POST /auth/certificate: the caller's ephemeral Ed25519 key, certified for about 30 days. The key arrives
 * as the SDKs send it (raw 32 bytes from libsodium or DER SPKI from the JVM, in standard base64); the leaf
 * names the caller's user id, which the operations they sign must carry as `iss`.
 */
export async function issueCertificate(ca: PlatformCa, user: LockUser, ephemeralKey: string): Promise<CertificateResponse> {
  const key = readEphemeralKey(ephemeralKey);
  if (!key) throw badRequest(operationErrors.ephemeralKeyInvalid);
  return { certificateChain: await ca.issue(user.id, key), userId: user.id };
}
