import { createPublicKey, verify as cryptoVerify, type JsonWebKey } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { compactVerify, importJWK, type JWK } from 'jose';
import {
  keyExpiryState,
  MAX_TEXT_LENGTH,
  normaliseIssuerUrl,
  platformUserErrors,
  textProblem,
  TOKEN_CHECK_IDS,
  type KeySource,
  TOKEN_CHECK_LABELS,
  type PublicJwk,
  type TokenCheck,
  type TokenCheckId,
  type TokenCheckReport,
} from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { applicationIssuers, applicationKeys } from '../db/schema.js';
import type { DiscoveryLog, Issuers } from './issuer-discovery.js';

/**
 * Verifies a JWT that an application's own backend signed for one of its users. Nothing in the
 * token is trusted before its signature is checked: the header and claims are only decoded to find the
 * application (by `iss`) and its key (by `kid`). The algorithm must fit the registered key, never the
 * other way round, so `none`, HS* "signed" with a public key, or an RSA key read as EC cannot pass.
 * Every step is reported, because the portal's token tester shows them one by one.
 */
export interface VerifyOptions {
  /** The platform audience (config PLATFORM_AUDIENCE): `aud` must contain it. */
  audience: string;
  /** Seconds of clock skew allowed on exp / iat / nbf. */
  leeway: number;
  /** The tester: only this application's issuers and keys count, so it reveals nothing of others. */
  applicationId?: string;
  /** Epoch seconds; tests may pin it. */
  now?: number;
  /** The app's issuer caches (key sets and OpenID configurations). */
  issuers: Issuers;
  /** Where an issuer's unusable OpenID configuration is reported (the request's logger). */
  log?: DiscoveryLog;
}

export interface VerifiedIdentity {
  applicationId: string;
  sub: string;
  /** Lower-cased; null when the claim is absent or not an email address. */
  email: string | null;
  displayName: string | null;
}

export interface TokenVerification {
  report: TokenCheckReport;
  /** Set only when every check passed. */
  identity: VerifiedIdentity | null;
  /** Epoch seconds: when the verifying key expires (its `exp`), if it does; caches of the result end there. */
  keyExpiresAt: number | null;
}

/** Which algorithms each key type may be used with (RFC 7518, RFC 8037, RFC 8812). */
const RSA_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const EC_ALGS: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512', secp256k1: 'ES256K' };
const OKP_ALGS: Record<string, string[]> = { Ed25519: ['EdDSA', 'Ed25519'] };
const ALL_ALGS = new Set([...RSA_ALGS, ...Object.values(EC_ALGS), ...Object.values(OKP_ALGS).flat()]);

export function algorithmsFor(jwk: Pick<PublicJwk, 'kty' | 'crv'>): string[] {
  if (jwk.kty === 'RSA') return RSA_ALGS;
  if (jwk.kty === 'EC') return jwk.crv && EC_ALGS[jwk.crv] ? [EC_ALGS[jwk.crv]!] : [];
  if (jwk.kty === 'OKP') return (jwk.crv && OKP_ALGS[jwk.crv]) || [];
  return [];
}

/** The checks whose own message would tell an outsider what is registered (see `finish`). */
const UNDISCLOSED_CHECKS: ReadonlySet<TokenCheckId> = new Set(['issuer', 'key', 'algorithm', 'signature']);

const B64URL = /^[A-Za-z0-9_-]*$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_ISSUER_LENGTH = 2048;
const MAX_SUB_LENGTH = 255;
/** Postgres text cannot hold NUL; such a value cannot match anything and must not reach a query. */
const storable = (v: string, max: number) => v.length > 0 && v.length <= max && !v.includes('\u0000');

type Json = Record<string, unknown>;

function decodePart(part: string): Json | null {
  if (!B64URL.test(part) || part.length === 0) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const iso = (seconds: number) => {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? String(seconds) : d.toISOString();
};
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Each check's outcome as the steps record it; a check no step reached reads as skipped. */
class Checks {
  readonly results = new Map<TokenCheckId, Omit<TokenCheck, 'id' | 'label'>>();
  pass(id: TokenCheckId, message: string) {
    this.results.set(id, { status: 'pass', message });
  }
  fail(id: TokenCheckId, message: string) {
    this.results.set(id, { status: 'fail', message });
  }
  skip(id: TokenCheckId, message: string) {
    this.results.set(id, { status: 'skipped', message });
  }
}

/** What the issuer and key steps found: the application, its key and where the key came from. */
interface Found {
  applicationId: string | null;
  jwk: PublicJwk | null;
  keySource: KeySource | null;
}
const NOTHING_FOUND: Found = { applicationId: null, jwk: null, keySource: null };

export async function verifyApplicationToken(db: Db, token: string, options: VerifyOptions): Promise<TokenVerification> {
  const checks = new Checks();
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const decoded = decodeToken(token, checks);
  if (!decoded.ok) return finish(checks, options, decoded.header, decoded.claims, NOTHING_FOUND);
  const { header, claims } = decoded;
  const issuer = await checkIssuer(db, claims, options, checks);
  const { jwk, keySource } = await checkKey(db, header, issuer, options, now, checks);
  const alg = checkAlgorithm(header, jwk, checks);
  // 5. Signature.
  if (!jwk || !alg) checks.skip('signature', 'Not checked: needs a matching key and a fitting algorithm');
  else {
    const problem = await checkSignature(token.trim(), jwk, alg);
    if (problem) checks.fail('signature', problem);
    else checks.pass('signature', `Signature verified with key ${jwk.kid}`);
  }
  checkAudience(claims, options.audience, checks);
  checkTimes(claims, now, options.leeway, checks);
  checkSubject(claims, checks);
  return finish(checks, options, header, claims, { applicationId: issuer?.applicationId ?? null, jwk, keySource });
}

function finish(checks: Checks, options: VerifyOptions, header: Json | null, claims: Json | null, found: Found): TokenVerification {
  const { applicationId, jwk, keySource } = found;
  const all = TOKEN_CHECK_IDS.map((id) => ({
    id,
    label: TOKEN_CHECK_LABELS[id],
    ...(checks.results.get(id) ?? { status: 'skipped' as const, message: 'Not checked because the token could not be decoded' }),
  }));
  const failed = all.find((c) => c.status !== 'pass');
  // Outside the tester, the answer must not tell whether an issuer or a kid is registered: every failed
  // issuer, key, algorithm or signature check reads the same. The tester (owners only, this application
  // only) keeps each check's own message.
  const error = !failed ? null : !options.applicationId && UNDISCLOSED_CHECKS.has(failed.id) ? platformUserErrors.tokenNotVerified : failed.message;
  const report: TokenCheckReport = { valid: !failed, error, header, claims, applicationId, checks: all, keySource };
  const keyExpiresAt = jwk?.exp ?? null;
  if (failed || !applicationId || !claims) return { report, identity: null, keyExpiresAt };
  return { report, identity: { applicationId, sub: claims.sub as string, ...profileOf(claims) }, keyExpiresAt };
}

type Decoded = { ok: true; header: Json; claims: Json } | { ok: false; header: Json | null; claims: Json | null };

/** 1. Decode, trusting nothing yet. A token that is not a JWT still reports what of it could be decoded. */
function decodeToken(token: string, checks: Checks): Decoded {
  const parts = token.trim().split('.');
  if (parts.length === 5) {
    checks.fail('decode', 'This is an encrypted token (JWE); send a signed JWT (JWS)');
    return { ok: false, header: null, claims: null };
  }
  const header = parts.length === 3 ? decodePart(parts[0]!) : null;
  const claims = parts.length === 3 ? decodePart(parts[1]!) : null;
  if (!header || !claims || !B64URL.test(parts[2] ?? '')) {
    checks.fail('decode', 'Not a JWT: expected three base64url parts, a JSON header and JSON claims, separated by dots');
    return { ok: false, header, claims };
  }
  checks.pass('decode', `Header and claims decoded (alg ${String(header.alg)}, kid ${String(header.kid)})`);
  return { ok: true, header, claims };
}

interface RegisteredIssuer {
  applicationId: string;
  url: string;
  /** Added with discovery: the jwks_uri checked then, and when (see IssuerConfigs.jwksUriFor). */
  discovery: { jwksUri: string; checkedAt: Date } | null;
}

/** 2. Issuer → application (exact match; an issuer belongs to one application only). */
async function checkIssuer(db: Db, claims: Json, options: VerifyOptions, checks: Checks): Promise<RegisteredIssuer | null> {
  const iss = claims.iss;
  const scope = options.applicationId ? 'on this application' : 'by any application';
  if (typeof iss !== 'string' || iss.length === 0) {
    checks.fail('issuer', 'The token has no issuer (iss)');
    return null;
  }
  if (!storable(iss, MAX_ISSUER_LENGTH)) {
    checks.fail('issuer', `Issuer ${JSON.stringify(iss.slice(0, 100))} is not registered ${scope}`);
    return null;
  }
  const [row] = await db
    .select({ url: applicationIssuers.url, applicationId: applicationIssuers.applicationId, jwksUri: applicationIssuers.jwksUri, createdAt: applicationIssuers.createdAt })
    .from(applicationIssuers)
    // In the auth domains' normal form; a domain stored before they were normalised (as given) by its exact text.
    .where(inArray(applicationIssuers.url, [...new Set([normaliseIssuerUrl(iss) ?? iss, iss])]))
    .limit(1);
  if (!row || (options.applicationId && row.applicationId !== options.applicationId)) {
    checks.fail('issuer', `Issuer ${iss} is not registered ${scope} (auth domains must match exactly)`);
    return null;
  }
  const discovery = row.jwksUri ? { jwksUri: row.jwksUri, checkedAt: row.createdAt } : null;
  checks.pass('issuer', `Issuer ${iss} is registered${discovery ? ' (keys also from its OpenID configuration)' : ''}`);
  return { applicationId: row.applicationId, url: row.url, discovery };
}

/**
 * 3. Key by kid, among that application's uploaded keys, then in its issuer's key set (discovery).
 * An expired key (its `exp` passed) is as good as absent.
 */
async function checkKey(
  db: Db,
  header: Json,
  issuer: RegisteredIssuer | null,
  options: VerifyOptions,
  now: number,
  checks: Checks,
): Promise<{ jwk: PublicJwk | null; keySource: KeySource | null }> {
  const none = { jwk: null, keySource: null };
  const kid = header.kid;
  if (typeof kid !== 'string' || kid.length === 0) checks.fail('key', 'The token header has no key id (kid)');
  else if (!issuer) checks.skip('key', 'No application to look the key up in (the issuer did not match)');
  else if (!storable(kid, 1000)) checks.fail('key', 'No key with this kid is registered on the application');
  else return findKey(db, kid, issuer, options, now, checks);
  return none;
}

async function findKey(
  db: Db,
  kid: string,
  issuer: RegisteredIssuer,
  options: VerifyOptions,
  now: number,
  checks: Checks,
): Promise<{ jwk: PublicJwk | null; keySource: KeySource | null }> {
  const { discovery } = issuer;
  let jwk: PublicJwk | null = null;
  let keySource: KeySource | null = null;
  const [row] = await db
    .select({ jwk: applicationKeys.jwk })
    .from(applicationKeys)
    .where(and(eq(applicationKeys.applicationId, issuer.applicationId), eq(applicationKeys.kid, kid)))
    .limit(1);
  const expired = row && keyExpiryState(row.jwk.exp, now) === 'expired' ? row.jwk : null;
  let issuerProblem: string | null = null;
  // The issuer's key set as its OpenID configuration names it now; configProblem: the last good one's, and why.
  let jwksUri: string | null = null;
  let configProblem: string | null = null;
  if (row && !expired) {
    jwk = row.jwk;
    keySource = { type: 'uploaded', kid };
  } else if (discovery) {
    try {
      ({ jwksUri, problem: configProblem } = await options.issuers.configs.jwksUriFor(issuer.url, discovery, options.log));
      const found = await options.issuers.keys.find(jwksUri, kid);
      if (found && keyExpiryState(found.exp, now) !== 'expired') {
        jwk = found;
        keySource = { type: 'issuer', kid, jwksUri, ...(configProblem ? { configProblem } : {}) };
      }
    } catch (error) {
      issuerProblem = (error as Error).message;
    }
  }
  const lastGood = configProblem ? ` (the last good one: the OpenID configuration cannot be used now — ${configProblem})` : '';
  if (jwk && keySource?.type === 'issuer') checks.pass('key', `Key ${kid} (${describeKey(jwk)}) found in the issuer's key set ${jwksUri}${lastGood}`);
  else if (jwk) checks.pass('key', `Key ${kid} (${describeKey(jwk)}) found among the uploaded keys`);
  else if (expired) checks.fail('key', `Key ${kid} expired at ${iso(expired.exp!)}; upload a new key`);
  else if (issuerProblem) checks.fail('key', `No uploaded key has kid ${kid}, and ${issuerProblem.charAt(0).toLowerCase()}${issuerProblem.slice(1)}${lastGood}`);
  else if (discovery) checks.fail('key', `No key with kid ${kid} is registered on the application or in the issuer's key set${lastGood ? ` ${jwksUri}${lastGood}` : ''}`);
  else checks.fail('key', `No key with kid ${kid} is registered on the application`);
  return { jwk, keySource };
}

/** 4. Algorithm: decided by the registered key, never by the token alone. The algorithm when it fits the key. */
function checkAlgorithm(header: Json, jwk: PublicJwk | null, checks: Checks): string | null {
  const alg = header.alg;
  if (typeof alg !== 'string' || alg.length === 0) checks.fail('algorithm', 'The token header has no algorithm (alg)');
  else if (alg.toLowerCase() === 'none') checks.fail('algorithm', 'Unsigned tokens (alg none) are never accepted');
  else if (/^HS/i.test(alg)) checks.fail('algorithm', `Symmetric algorithms (${alg}) are never accepted; sign with your private key`);
  else if (!ALL_ALGS.has(alg)) checks.fail('algorithm', `Unsupported algorithm ${alg}`);
  else if (!jwk) checks.skip('algorithm', `${alg} could not be compared with a key (no key matched)`);
  else {
    const allowed = algorithmsFor(jwk);
    if (!allowed.includes(alg)) checks.fail('algorithm', `Algorithm ${alg} does not fit this ${describeKey(jwk)} key (use ${allowed.join(', ') || 'none'})`);
    else if (jwk.alg && jwk.alg !== alg) checks.fail('algorithm', `Key ${jwk.kid} is registered for ${jwk.alg} only, but the token says ${alg}`);
    else {
      checks.pass('algorithm', `${alg} fits the ${describeKey(jwk)} key`);
      return alg;
    }
  }
  return null;
}

/** 6. Audience. */
function checkAudience(claims: Json, audience: string, checks: Checks): void {
  const aud = claims.aud;
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
  if (audiences.length === 0) checks.fail('audience', `The token has no audience (aud); it must contain ${audience}`);
  else if (!audiences.includes(audience))
    checks.fail('audience', `Wrong audience: aud must contain ${audience} (the token has ${audiences.join(', ')})`);
  else checks.pass('audience', `Audience contains ${audience}`);
}

/** 7. Times, with leeway. */
function checkTimes(claims: Json, now: number, leeway: number, checks: Checks): void {
  const { exp, iat, nbf } = claims;
  if (exp === undefined) checks.fail('times', 'The token has no expiry (exp); it is required');
  else if (!isTime(exp)) checks.fail('times', 'The expiry (exp) must be a number of seconds');
  else if (exp <= now - leeway) checks.fail('times', `The token expired at ${iso(exp)}`);
  else if (nbf !== undefined && !isTime(nbf)) checks.fail('times', 'Not-before (nbf) must be a number of seconds');
  else if (isTime(nbf) && nbf > now + leeway) checks.fail('times', `The token is not valid yet: not before ${iso(nbf)}`);
  else if (iat !== undefined && !isTime(iat)) checks.fail('times', 'Issued-at (iat) must be a number of seconds');
  else if (isTime(iat) && iat > now + leeway) checks.fail('times', `The token was issued in the future (${iso(iat)}); check the signing clock`);
  else checks.pass('times', `Valid until ${iso(exp)} (leeway ${leeway}s)`);
}

/** 8. Subject: the user's id at the application. */
function checkSubject(claims: Json, checks: Checks): void {
  const sub = claims.sub;
  if (typeof sub !== 'string' || sub.length === 0) checks.fail('subject', 'The token has no subject (sub), the user id at your application');
  else if (!storable(sub, MAX_SUB_LENGTH)) checks.fail('subject', `The subject (sub) must be at most ${MAX_SUB_LENGTH} characters`);
  else checks.pass('subject', `Subject ${sub}`);
}

function describeKey(jwk: PublicJwk): string {
  return jwk.kty === 'RSA' ? 'RSA' : `${jwk.kty} ${jwk.crv ?? ''}`.trim();
}

/** null when the signature is good, otherwise why not. */
async function checkSignature(token: string, jwk: PublicJwk, alg: string): Promise<string | null> {
  const mismatch = `The signature does not match key ${jwk.kid}`;
  const publicMembers: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, n: jwk.n, e: jwk.e };
  if (alg === 'ES256K') {
    // jose 6 dropped secp256k1; Node's crypto still verifies it (RFC 8812: SHA-256, raw r||s).
    try {
      const [h, p, s] = token.split('.') as [string, string, string];
      const key = createPublicKey({ key: publicMembers as JsonWebKey, format: 'jwk' });
      const ok = cryptoVerify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
      return ok ? null : mismatch;
    } catch {
      return `Key ${jwk.kid} could not be used to verify the signature`;
    }
  }
  let key;
  try {
    key = await importJWK(publicMembers, alg);
  } catch {
    return `Key ${jwk.kid} could not be used with ${alg}`;
  }
  try {
    await compactVerify(token, key, { algorithms: [alg] });
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return mismatch;
    return `${mismatch}: ${(error as Error).message}`;
  }
}

/**
 * The profile a verified token carries, as far as it is text the platform would accept from a form: the
 * contract's text rule (`textProblem`) drops an email or a name with a control character, a line break or a
 * bidirectional control (U+202E would show "user6@example.com" reversed to the owner). The token still signs
 * its user in — the claims are the application's, and a dropped one is simply not stored.
 */
function profileOf(claims: Json): { email: string | null; displayName: string | null } {
  const rawEmail = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  const email = storable(rawEmail, 254) && EMAIL.test(rawEmail) && !textProblem(rawEmail) ? rawEmail : null;
  const name = [claims.name, claims.displayName]
    .map((v) => (typeof v === 'string' ? v.trim().slice(0, MAX_TEXT_LENGTH).trim() : ''))
    .find((v) => v.length > 0 && !textProblem(v));
  return { email, displayName: name || null };
}
