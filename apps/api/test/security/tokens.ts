import { generateKeyPairSync, createHmac, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/** A fixed signing key for the app under test, so the suite can forge every kind of bad token. */
export function makeSigningKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey,
    publicKey,
    pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

export interface Claims {
  sub: string;
  email: string;
  sid: string;
}

export async function signWith(key: KeyObject, claims: Claims, opts: { exp?: number; typ?: string; iss?: string; aud?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: claims.email, sid: claims.sid, typ: opts.typ ?? 'access' })
    .setProtectedHeader({ alg: 'EdDSA' })
    .setSubject(claims.sub)
    .setIssuer(opts.iss ?? 'latchkey')
    .setAudience(opts.aud ?? 'latchkey-portal')
    .setIssuedAt(now - 10)
    .setExpirationTime(opts.exp ?? now + 600)
    .sign(key);
}

/** `alg: none`: a token with no signature at all. */
export function unsignedToken(claims: Claims) {
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, typ: 'access', iss: 'latchkey', aud: 'latchkey-portal', exp: now + 600 })}.`;
}

/** The classic key-confusion attack: HS256 with the server's public key as the HMAC secret. */
export function hs256WithPublicKey(claims: Claims, publicPem: string) {
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, typ: 'access', iss: 'latchkey', aud: 'latchkey-portal', exp: now + 600 })}`;
  return `${head}.${createHmac('sha256', publicPem).update(head).digest('base64url')}`;
}
