import { OPERATION_MAX_LIFETIME_S, type Operation, type OperationClaims } from '@latchkey/contract';

/**
 * Signed lock operations as the platform's SDKs send them to POST /device/{lockId}/execute: a compact
 * JWS with header `{alg: "EdDSA", typ: "JWT", x5c}` over `{iss, sub, nbf, iat, exp, jti, operation}`,
 * signed here in the browser with a WebCrypto Ed25519 key whose private half never leaves it.
 */

const ED25519 = { name: 'Ed25519' } as const;

export function base64(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function base64Url(bytes: ArrayBuffer | Uint8Array): string {
  return base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const encodeJson = (value: unknown) => base64Url(new TextEncoder().encode(JSON.stringify(value)));

/**
 * A new Ed25519 key pair. The private key is not extractable: it can sign, and be stored in IndexedDB
 * (structured clone keeps the flag), but its bytes can never be read by script, ours or injected.
 */
export async function generateSigningKey(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(ED25519, false, ['sign', 'verify'])) as CryptoKeyPair;
}

/** The public key as /auth/certificate's `ephemeralKey`: the raw 32 bytes in standard base64 (the SDKs' form). */
export async function exportPublicKey(publicKey: CryptoKey): Promise<string> {
  return base64(await crypto.subtle.exportKey('raw', publicKey));
}

export interface SignOperationInput {
  privateKey: CryptoKey;
  /** From /auth/certificate: standard base64 DER, leaf first. */
  certificateChain: string[];
  /** The certificate's user id: the operation's issuer. */
  userId: string;
  lockId: string;
  operation: Operation;
  /** Seconds the operation stays valid; capped at the platform's 60. */
  lifetimeS?: number;
  nowMs?: number;
}

/** Signs one operation; each call gets a fresh `jti`, so no two signed operations can be replayed as one. */
export async function signOperation(input: SignOperationInput): Promise<string> {
  const now = Math.floor((input.nowMs ?? Date.now()) / 1000);
  const lifetime = Math.min(input.lifetimeS ?? OPERATION_MAX_LIFETIME_S, OPERATION_MAX_LIFETIME_S);
  const header = { alg: 'EdDSA', typ: 'JWT', x5c: input.certificateChain };
  const claims: OperationClaims = {
    iss: input.userId,
    sub: input.lockId,
    nbf: now,
    iat: now,
    exp: now + lifetime,
    jti: crypto.randomUUID(),
    operation: input.operation,
  };
  const signingInput = `${encodeJson(header)}.${encodeJson(claims)}`;
  const signature = await crypto.subtle.sign(
    ED25519,
    input.privateKey,
    new TextEncoder().encode(signingInput),
  );
  return `${signingInput}.${base64Url(signature)}`;
}
