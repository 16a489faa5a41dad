import { createHmac, generateKeyPairSync, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { PublicJwk } from '@latchkey/contract';
import { applicationIssuers, applicationKeys, applicationOwners, applications, sessions, users } from '../../db/schema.js';
import { uniqueEmail, type TestApp } from '../../../test/helpers.js';

/**
 * Test set-up for issue 7, through the database: a portal user with a live session (signed by the app's
 * own TokenService), an application they own, and keys/issuers registered on it.
 */
export async function createOwner(t: TestApp): Promise<{ userId: string; email: string; token: string }> {
  const email = uniqueEmail('owner');
  const [user] = await t.database.db.insert(users).values({ email, passwordHash: 'x', emailVerified: true }).returning();
  const [session] = await t.database.db
    .insert(sessions)
    .values({ userId: user!.id, refreshJti: randomUUID(), publicKey: 'test', expiresAt: new Date(Date.now() + 3_600_000) })
    .returning();
  const token = await t.app.tokens.signAccess({ sub: user!.id, email, sid: session!.id });
  return { userId: user!.id, email, token };
}

export async function createApplication(t: TestApp, ownerId: string, name = 'Partner App'): Promise<string> {
  const [app] = await t.database.db.insert(applications).values({ name, companyName: 'Partner Co', mailingAddress: '1 Road' }).returning();
  await t.database.db.insert(applicationOwners).values({ applicationId: app!.id, userId: ownerId });
  return app!.id;
}

export async function addIssuer(t: TestApp, applicationId: string, url: string): Promise<void> {
  await t.database.db.insert(applicationIssuers).values({ applicationId, url });
}

export type KeyKind = 'RS256' | 'PS256' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA' | 'ES256K';

export interface SigningKey {
  kid: string;
  alg: KeyKind;
  privateKey: CryptoKey | KeyObject;
  publicJwk: PublicJwk;
}

/** A fresh key pair; the public half is registered on the application unless `register` is false. */
export async function addKey(t: TestApp, applicationId: string, alg: KeyKind, options: { kid?: string; register?: boolean; jwkAlg?: string } = {}): Promise<SigningKey> {
  const kid = options.kid ?? `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`;
  let privateKey: CryptoKey | KeyObject;
  let jwk: JWK;
  if (alg === 'ES256K') {
    const pair = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    privateKey = pair.privateKey;
    jwk = pair.publicKey.export({ format: 'jwk' }) as JWK;
  } else {
    const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
    privateKey = pair.privateKey;
    jwk = await exportJWK(pair.publicKey);
  }
  const publicJwk = { ...jwk, kid, use: 'sig', ...(options.jwkAlg ? { alg: options.jwkAlg } : {}) } as PublicJwk;
  if (options.register !== false) await t.database.db.insert(applicationKeys).values({ applicationId, kid, jwk: publicJwk });
  return { kid, alg, privateKey, publicJwk };
}

export const AUDIENCE = 'http://localhost:3000';
const now = () => Math.floor(Date.now() / 1000);

export interface TokenOptions {
  iss: string;
  sub?: string | null;
  email?: string;
  name?: string;
  aud?: string | string[] | null;
  exp?: number | null;
  iat?: number;
  nbf?: number;
  /** Header overrides: a different alg or kid than the key's. */
  alg?: string;
  kid?: string;
}

function claimsOf(o: TokenOptions): Record<string, unknown> {
  const claims: Record<string, unknown> = { iss: o.iss, iat: o.iat ?? now() };
  if (o.sub !== null) claims.sub = o.sub ?? 'user-1';
  if (o.aud !== null) claims.aud = o.aud ?? AUDIENCE;
  if (o.exp !== null) claims.exp = o.exp ?? now() + 600;
  if (o.email) claims.email = o.email;
  if (o.name) claims.name = o.name;
  if (o.nbf !== undefined) claims.nbf = o.nbf;
  return claims;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** What an application's backend does: sign its user's token with its private key. */
export async function signUserToken(key: SigningKey, o: TokenOptions): Promise<string> {
  const header = { alg: o.alg ?? key.alg, kid: o.kid ?? key.kid, typ: 'JWT' };
  if (key.alg === 'ES256K') {
    const input = `${b64(header)}.${b64(claimsOf(o))}`;
    const sig = cryptoSign('sha256', Buffer.from(input), { key: key.privateKey as KeyObject, dsaEncoding: 'ieee-p1363' });
    return `${input}.${sig.toString('base64url')}`;
  }
  // WebCrypto keys are bound to one algorithm: the same RSA key material signs PS256 once re-imported.
  const privateKey = header.alg === key.alg ? key.privateKey : await importJWK(await exportJWK(key.privateKey), header.alg);
  return new SignJWT(claimsOf(o)).setProtectedHeader(header).sign(privateKey as CryptoKey);
}

/** `alg: none`: no signature at all. */
export function unsignedToken(kid: string, o: TokenOptions): string {
  return `${b64({ alg: 'none', kid, typ: 'JWT' })}.${b64(claimsOf(o))}.`;
}

/** The classic confusion attack: HS256 with the registered public key as the HMAC secret. */
export function hs256WithPublicKey(key: SigningKey, o: TokenOptions): string {
  const input = `${b64({ alg: 'HS256', kid: key.kid, typ: 'JWT' })}.${b64(claimsOf(o))}`;
  const secret = JSON.stringify(key.publicJwk);
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
