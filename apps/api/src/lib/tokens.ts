import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  SignJWT,
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  importSPKI,
  jwtVerify,
  type CryptoKey,
  type JWK,
} from 'jose';
import type { Config } from '../config.js';

const ALG = 'EdDSA';
const KEY_FILE = 'jwt-signing-key.pem';

export interface AccessClaims {
  sub: string;
  email: string;
  sid: string;
}
export interface RefreshClaims {
  sub: string;
  sid: string;
  jti: string;
}

/**
 * Signs and verifies the portal's own tokens (Ed25519). The signing key comes from JWT_PRIVATE_KEY or is
 * generated once into the data directory; JWT_PREVIOUS_PUBLIC_KEYS keeps tokens of a rotated-out key
 * valid until they expire, so rotation logs nobody out.
 */
export class TokenService {
  /**
   * Access tokens already verified, by their exact text, until they expire. A signature check is the
   * costliest part of an authenticated read; the session is still checked on every request (through the
   * access cache, which the database's change notices keep true), so a logout still ends the token.
   * Bounded: the oldest entry goes when full.
   */
  private readonly verified = new Map<string, { claims: AccessClaims; expiresAtMs: number }>();
  private static readonly VERIFIED_CACHE_SIZE = 10_000;

  private constructor(
    private readonly signingKey: CryptoKey,
    private readonly kid: string,
    private readonly verifyKeys: ReturnType<typeof createLocalJWKSet>,
    private readonly cfg: Config['jwt'],
  ) {}

  static async create(config: Config): Promise<TokenService> {
    const pem = config.jwt.privateKey?.replace(/\\n/g, '\n') ?? (await loadOrCreateKeyFile(config.dataDir));
    const signingKey = await importPKCS8(pem, ALG, { extractable: true });
    const publicJwk = await publicJwkOf(signingKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const keys: JWK[] = [{ ...publicJwk, kid, alg: ALG }];
    for (const spki of splitPems(config.jwt.previousPublicKeys)) {
      const jwk = await exportJWK(await importSPKI(spki, ALG, { extractable: true }));
      keys.push({ ...jwk, kid: await calculateJwkThumbprint(jwk), alg: ALG });
    }
    return new TokenService(signingKey, kid, createLocalJWKSet({ keys }), config.jwt);
  }

  signAccess(claims: AccessClaims): Promise<string> {
    return new SignJWT({ email: claims.email, sid: claims.sid, typ: 'access' })
      .setProtectedHeader({ alg: ALG, kid: this.kid })
      .setSubject(claims.sub)
      .setIssuer(this.cfg.issuer)
      .setAudience(this.cfg.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.cfg.accessTtl}s`)
      .sign(this.signingKey);
  }

  signRefresh(claims: Omit<RefreshClaims, 'jti'> & { jti?: string }): Promise<{ token: string; jti: string }> {
    const jti = claims.jti ?? randomUUID();
    return new SignJWT({ sid: claims.sid, typ: 'refresh' })
      .setProtectedHeader({ alg: ALG, kid: this.kid })
      .setSubject(claims.sub)
      .setJti(jti)
      .setIssuer(this.cfg.issuer)
      .setAudience(this.cfg.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.cfg.refreshTtl}s`)
      .sign(this.signingKey)
      .then((token) => ({ token, jti }));
  }

  /** The claims of an access token verified before and not yet expired, without verifying again. */
  verifiedAccess(token: string): AccessClaims | undefined {
    const hit = this.verified.get(token);
    if (!hit) return undefined;
    if (hit.expiresAtMs > Date.now()) return hit.claims;
    this.verified.delete(token);
    return undefined;
  }

  /** Throws on anything but a valid, unexpired access token of ours. */
  async verifyAccess(token: string): Promise<AccessClaims> {
    const hit = this.verifiedAccess(token);
    if (hit) return hit;
    const { payload } = await jwtVerify(token, this.verifyKeys, {
      algorithms: [ALG],
      issuer: this.cfg.issuer,
      audience: this.cfg.audience,
      clockTolerance: 5,
    });
    if (payload.typ !== 'access' || typeof payload.sub !== 'string') throw new Error('not an access token');
    if (typeof payload.email !== 'string' || typeof payload.sid !== 'string') throw new Error('malformed claims');
    const claims = { sub: payload.sub, email: payload.email, sid: payload.sid };
    if (typeof payload.exp === 'number') {
      if (this.verified.size >= TokenService.VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { claims, expiresAtMs: payload.exp * 1000 });
    }
    return claims;
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    const { payload } = await jwtVerify(token, this.verifyKeys, {
      algorithms: [ALG],
      issuer: this.cfg.issuer,
      audience: this.cfg.audience,
      clockTolerance: 5,
    });
    if (payload.typ !== 'refresh' || typeof payload.sub !== 'string') throw new Error('not a refresh token');
    if (typeof payload.sid !== 'string' || typeof payload.jti !== 'string') throw new Error('malformed claims');
    return { sub: payload.sub, sid: payload.sid, jti: payload.jti };
  }
}

async function publicJwkOf(privateKey: CryptoKey): Promise<JWK> {
  const { kty, crv, x } = await exportJWK(privateKey);
  return { kty, crv, x };
}

function splitPems(value: string | undefined): string[] {
  if (!value) return [];
  return (value.replace(/\\n/g, '\n').match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []).map((s) => s.trim());
}

async function loadOrCreateKeyFile(dataDir: string): Promise<string> {
  const file = path.join(dataDir, KEY_FILE);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8');
  fs.mkdirSync(dataDir, { recursive: true });
  const { privateKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
  const pem = await exportPKCS8(privateKey);
  try {
    // 'wx' so two processes starting together cannot overwrite each other's key; the loser reads the winner's.
    fs.writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
    return pem;
  } catch {
    return fs.readFileSync(file, 'utf8');
  }
}
