import type { PublicJwk } from '@latchkey/contract';

/**
 * An auth key pair made in the browser (WebCrypto). The private half is extractable only
 * so it can be saved once, as a file on the owner's computer; it is never sent anywhere. The public half is
 * what the platform stores: its kid is the RFC 7638 JWK thumbprint (base64url, inside the contract's kid
 * pattern) and its alg the one that fits the key, so the contract's key rules accept it as it is.
 */
export type KeyKind = 'Ed25519' | 'ES256';
export type PrivateKeyFormat = 'jwk' | 'pem';

export interface GeneratedKeyPair {
  publicJwk: PublicJwk;
  /** The private JWK with its kid and alg (what examples/unlock-from-backend.mjs and the samples read). */
  privateJwk: JsonWebKey & { kid: string; alg: string };
  /** The private key as PKCS#8 PEM. */
  privatePem: string;
}

const ALGORITHMS: Record<KeyKind, { params: EcKeyGenParams | Algorithm; alg: string }> = {
  Ed25519: { params: { name: 'Ed25519' }, alg: 'EdDSA' },
  ES256: { params: { name: 'ECDSA', namedCurve: 'P-256' }, alg: 'ES256' },
};

const base64Url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** RFC 7638: SHA-256 over the required public members in lexicographic order, no spaces. */
export async function jwkThumbprint(jwk: JsonWebKey): Promise<string> {
  const members = jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return base64Url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(members))));
}

function pem(label: string, der: ArrayBuffer): string {
  const body = btoa(String.fromCharCode(...new Uint8Array(der)))
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

export async function generateAuthKeyPair(kind: KeyKind): Promise<GeneratedKeyPair> {
  const { params, alg } = ALGORITHMS[kind];
  const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const full = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const kid = await jwkThumbprint(full);
  const publicJwk: PublicJwk =
    kind === 'Ed25519'
      ? { kty: 'OKP', crv: 'Ed25519', x: full.x!, kid, alg, use: 'sig' }
      : { kty: 'EC', crv: 'P-256', x: full.x!, y: full.y!, kid, alg, use: 'sig' };
  const privateJwk = { kty: full.kty, crv: full.crv, x: full.x, ...(full.y ? { y: full.y } : {}), d: full.d, kid, alg, use: 'sig' };
  const privatePem = pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', pair.privateKey));
  return { publicJwk, privateJwk, privatePem };
}

/**
 * The file the private key is saved as; the backend guide's KEY_FILE names the same file. The kid is
 * base64url for a generated key; anything else a kid may hold becomes `_`.
 */
export function privateKeyFileName(kid: string, format: PrivateKeyFormat = 'jwk'): string {
  return `latchkey-${kid.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60)}.private.${format === 'jwk' ? 'jwk.json' : 'pem'}`;
}

const FORMAT_KEY = 'latchkey.privateKeyFormat.';

/**
 * The format the portal saved a generated key's private half in, remembered in this browser (until sign-out
 * clears it) so that the backend guide's KEY_FILE names the file that was saved: `.pem` or `.jwk.json`.
 */
export function rememberKeyFormat(kid: string, format: PrivateKeyFormat): void {
  try {
    localStorage.setItem(FORMAT_KEY + kid, format);
  } catch {
    // Storage full or refused: the guide falls back to the JWK file name.
  }
}

/** The format remembered for `kid`; a key the portal did not generate here is taken for a JWK file. */
export function rememberedKeyFormat(kid: string): PrivateKeyFormat {
  try {
    return localStorage.getItem(FORMAT_KEY + kid) === 'pem' ? 'pem' : 'jwk';
  } catch {
    return 'jwk';
  }
}

/** The private key's file contents in the chosen format. */
export function privateKeyFile(pair: GeneratedKeyPair, format: PrivateKeyFormat): { name: string; text: string; type: string } {
  return format === 'jwk'
    ? { name: privateKeyFileName(pair.publicJwk.kid, 'jwk'), text: `${JSON.stringify(pair.privateJwk, null, 2)}\n`, type: 'application/json' }
    : { name: privateKeyFileName(pair.publicJwk.kid, 'pem'), text: pair.privatePem, type: 'application/x-pem-file' };
}

/** Saves `text` as a download on this computer (nothing leaves the browser). */
export function downloadFile({ name, text, type }: { name: string; text: string; type: string }): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
