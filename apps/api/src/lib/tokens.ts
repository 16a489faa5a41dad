import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SignJWT, jwtVerify, type JWTHeaderParameters } from 'jose';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { ALG } from './signing-keys.js';
import { KeyRing } from './key-ring.js';

export interface AccessClaims {
  sub: string;
  email: string;
  sid: string;
}
/** A lock-user token (a tile's emailed sign-in): an application user, for the lock-user routes only. */
export interface LockUserClaims {
  /** The application user's id. */
  sub: string;
  /** Their application. */
  app: string;
  /** Epoch seconds. */
  exp: number;
}
export interface RefreshClaims {
  sub: string;
  sid: string;
  jti: string;
}

/** Seconds of clock difference between instances that a token's iat/exp may be off by. */
const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * Signs and verifies the portal's own tokens (Ed25519, a `kid` on each). The keys are the database's,
 * shared by every instance and rotated with `npm run keys:rotate` (lib/key-ring.ts), unless the operator
 * manages them with JWT_PRIVATE_KEY / JWT_PREVIOUS_PUBLIC_KEYS.
 */
export class TokenService {
  /**
   * Access tokens already verified, by their exact text, until they expire. A signature check is the
   * costliest part of an authenticated read; the session is still checked on every request (through the
   * access cache, which the database's change notices keep true), so a logout still ends the token.
   */
  private readonly verified = new LRUCache<string, { claims: AccessClaims; expiresAtMs: number }>({ max: 10_000 });
  private readonly keyFor = (header: JWTHeaderParameters) => this.keys.verifyKey(header.kid);

  private constructor(
    readonly keys: KeyRing,
    private readonly cfg: Config['jwt'],
  ) {}

  static async create(config: Config, db: Db): Promise<TokenService> {
    return new TokenService(await KeyRing.create(config, db), config.jwt);
  }

  /** Stops following the database's keys (on close). */
  stop(): void {
    this.keys.stop();
  }

  signAccess(claims: AccessClaims): Promise<string> {
    const { kid, key } = this.keys.signer();
    return new SignJWT({ email: claims.email, sid: claims.sid, typ: 'access' })
      .setProtectedHeader({ alg: ALG, kid })
      .setSubject(claims.sub)
      .setIssuer(this.cfg.issuer)
      .setAudience(this.cfg.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.cfg.accessTtl}s`)
      .sign(key);
  }

  signRefresh(claims: Omit<RefreshClaims, 'jti'> & { jti?: string }): Promise<{ token: string; jti: string }> {
    const jti = claims.jti ?? randomUUID();
    const { kid, key } = this.keys.signer();
    return new SignJWT({ sid: claims.sid, typ: 'refresh' })
      .setProtectedHeader({ alg: ALG, kid })
      .setSubject(claims.sub)
      .setJti(jti)
      .setIssuer(this.cfg.issuer)
      .setAudience(this.cfg.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.cfg.refreshTtl}s`)
      .sign(key)
      .then((token) => ({ token, jti }));
  }

  /**
   * A lock-user token: signed with the portal's keys, but its own `typ`, so no check of an access or a
   * refresh token takes it; only lock-user-auth verifies it, on the routes that take application users.
   */
  async signLockUser(claims: { sub: string; app: string }, ttlSeconds: number): Promise<{ token: string; exp: number }> {
    const { kid, key } = this.keys.signer();
    const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
    const token = await new SignJWT({ app: claims.app, typ: 'lock-user' })
      .setProtectedHeader({ alg: ALG, kid })
      .setSubject(claims.sub)
      .setIssuer(this.cfg.issuer)
      .setAudience(this.cfg.audience)
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(key);
    return { token, exp };
  }

  /** Throws on anything but a valid, unexpired lock-user token of ours. */
  async verifyLockUser(token: string): Promise<LockUserClaims> {
    const { payload } = await jwtVerify(token, this.keyFor, this.verifyOptions());
    if (payload.typ !== 'lock-user' || typeof payload.sub !== 'string') throw new Error('not a lock-user token');
    if (typeof payload.app !== 'string' || typeof payload.exp !== 'number') throw new Error('malformed claims');
    return { sub: payload.sub, app: payload.app, exp: payload.exp };
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
    const { payload } = await jwtVerify(token, this.keyFor, this.verifyOptions());
    if (payload.typ !== 'access' || typeof payload.sub !== 'string') throw new Error('not an access token');
    if (typeof payload.email !== 'string' || typeof payload.sid !== 'string') throw new Error('malformed claims');
    const claims = { sub: payload.sub, email: payload.email, sid: payload.sid };
    if (typeof payload.exp === 'number') this.verified.set(token, { claims, expiresAtMs: payload.exp * 1000 });
    return claims;
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    const { payload } = await jwtVerify(token, this.keyFor, this.verifyOptions());
    if (payload.typ !== 'refresh' || typeof payload.sub !== 'string') throw new Error('not a refresh token');
    if (typeof payload.sid !== 'string' || typeof payload.jti !== 'string') throw new Error('malformed claims');
    return { sub: payload.sub, sid: payload.sid, jti: payload.jti };
  }

  private verifyOptions() {
    return { algorithms: [ALG], issuer: this.cfg.issuer, audience: this.cfg.audience, clockTolerance: CLOCK_TOLERANCE_SECONDS };
  }
}
