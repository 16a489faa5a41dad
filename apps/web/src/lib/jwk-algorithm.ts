import type { PublicJwk } from '@latchkey/contract';

const EC_ALGS: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512', secp256k1: 'ES256K' };

/** The algorithm the platform accepts for a key (its `alg` if pinned), as the API's verifier decides it. */
export function algorithmFor(key: PublicJwk): string {
  if (key.alg) return key.alg;
  if (key.kty === 'RSA') return 'RS256';
  if (key.kty === 'OKP') return 'EdDSA';
  return EC_ALGS[key.crv ?? ''] ?? 'ES256';
}
