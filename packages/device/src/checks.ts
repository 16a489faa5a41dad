import { createHash, verify } from 'node:crypto';
import {
  MAX_DEVICE_MESSAGE_BYTES,
  MAX_JTI_LENGTH,
  MAX_OPERATION_LENGTH,
  OPERATION_CLOCK_SKEW_S,
  OPERATION_MAX_LIFETIME_S,
  OPERATION_TYPES,
  checkUsageRequirements,
  deviceConfigSchema,
  isOperationTime,
  operationErrors,
  operationLocationSchema,
  operationSchema,
  type DeviceConfig,
  type Operation,
  type OperationErrorKey,
  type OperationLocation,
  type RuleProblem,
} from '@latchkey/contract';
import { jsonSegment, splitJws, type CompactJws, type Json } from './jws.js';
import { deviceRefusals } from './refusals.js';
import type { ReplayCache } from './replay-cache.js';
import { checkUserTerms } from './rules.js';
import type { IssuedLeaf, PlatformTrust } from './trust.js';

/**
 * What a lock checks before it acts, from its own config and the platform CA alone: the operation's
 * chain, signature, issuer, subject, times, single use, the user's place in the config (bounds, window,
 * role, a certificate no older than the user's `certifiedAfter`) and the lock's time and location rules.
 * The same checks run on the platform; a lock that is offline makes the same decision.
 */

/**
 * The decision: accepted, or refused with the reason and, when the platform has the same check, the
 * reason's key in the operation catalogue (decided where it refuses, never read back from the text).
 */
export type Verdict<T> = ({ ok: true } & T) | { ok: false; reason: string; reasonKey?: OperationErrorKey };

export interface OperationContext {
  /** The lock's current config; null before the platform has sent one (everything is refused). */
  config: DeviceConfig | null;
  lockId: string;
  platformCa: PlatformTrust;
  /** Epoch ms. */
  now: number;
  replayCache: ReplayCache;
}

export interface VerifiedOperation {
  operation: Operation;
  /** The signer (the leaf's user). */
  userId: string;
  location: OperationLocation | undefined;
  /** The jti or signature this operation used up. */
  useKey: string;
}

const ALGORITHMS = new Set(['EdDSA', 'Ed25519']);
const STANDARD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

class Refusal extends Error {
  constructor(
    reason: string,
    readonly key?: OperationErrorKey,
  ) {
    super(reason);
  }
}
/** Refuses with the catalogue's reason `key`: its text, or `reason` (the text with a detail after it). */
const refuse = (key: OperationErrorKey, reason: string = operationErrors[key]): never => {
  throw new Refusal(reason, key);
};
/** Refuses for a rule the operation did not meet (the contract's checks and the config user's terms). */
const refuseFor = (problem: RuleProblem): never => refuse(problem.key, problem.message);
/** Refuses with a reason only a lock gives: it has no catalogue key. */
const refuseAsLock = (reason: string): never => {
  throw new Refusal(reason);
};

/** The verdict of a refusal: its reason, and its key when it has one. */
const refused = (error: Refusal): { ok: false; reason: string; reasonKey?: OperationErrorKey } =>
  error.key === undefined ? { ok: false, reason: error.message } : { ok: false, reason: error.message, reasonKey: error.key };

/** Checks a user's signed operation; the replay cache records it only when it is accepted. */
export function verifyOperation(jws: string, context: OperationContext): Verdict<{ operation: Operation; verified: VerifiedOperation }> {
  try {
    const verified = checkOperation(jws, context);
    return { ok: true, operation: verified.operation, verified };
  } catch (error) {
    if (error instanceof Refusal) return refused(error);
    throw error;
  }
}

function checkOperation(jws: string, { config, lockId, platformCa, now, replayCache }: OperationContext): VerifiedOperation {
  const token = splitJws(jws, MAX_OPERATION_LENGTH) ?? refuse('malformed');
  const leaf = signerOf(token, platformCa);
  if (leaf.userId === null) refuse('foreignChain');
  if (leaf.weakKey) refuse('certificateKeyWeak');
  if (now < leaf.notBefore) refuse('certificateNotYetValid');
  if (now > leaf.notAfter) refuse('certificateExpired');
  if (!signatureHolds(token, leaf)) refuse('signature');

  // Verified from here on.
  const claims = jsonSegment(token.body) ?? refuse('claimsInvalid');
  if (claims.iss !== leaf.userId) refuse('issuer');
  if (claims.sub !== lockId) refuse('subject');
  checkTimes(claims, now);
  const useKey = useKeyOf(claims, token.signature);
  const { operation, location } = readOperation(claims);

  if (!config) return refuseAsLock(deviceRefusals.noConfig);
  const user = config.users.find((u) => u.userId === leaf.userId) ?? refuse('noAccess');
  // The platform ended this user's earlier certificates (a password reset or change): only later ones count.
  if (typeof user.certifiedAfter === 'number' && leaf.notBefore < user.certifiedAfter * 1000) refuse('certificateRevoked');
  const termsProblem = checkUserTerms(user, now);
  if (termsProblem) refuseFor(termsProblem);
  if (operation.type === 'MUTATE_LOCK') {
    const ruleProblem = checkUsageRequirements(config.usageRequirements, location, now);
    if (ruleProblem) refuseFor(ruleProblem);
  } else if (user.role !== 'ADMIN') {
    refuse('adminOnly');
  }
  if (!replayCache.use(useKey, now)) refuse('replayed');
  return { operation, userId: leaf.userId!, location, useKey };
}

/**
 * The certificate that signed a JWS, read from its header: EdDSA only (never taken from the token),
 * typ (or `type`, which one SDK writes) JWT when present, no critical extensions, and an x5c whose leaf
 * the platform CA issued and whose optional second certificate is the CA itself.
 */
function signerOf(token: CompactJws, trust: PlatformTrust, isConfig = false): IssuedLeaf {
  const header = jsonSegment(token.head) ?? refuse('headerInvalid');
  if (typeof header.alg !== 'string' || !ALGORITHMS.has(header.alg)) refuse('algorithm');
  if (!isConfig) {
    for (const type of [header.typ, header.type]) {
      if (type !== undefined && (typeof type !== 'string' || type.toUpperCase() !== 'JWT')) refuse('type');
    }
  }
  if (header.crit !== undefined) refuse('headerInvalid');
  const { x5c } = header;
  if (x5c === undefined || (Array.isArray(x5c) && x5c.length === 0)) refuse('x5cMissing');
  if (!Array.isArray(x5c) || x5c.length > 3 || !x5c.every((c) => typeof c === 'string' && c.length < 8192 && STANDARD_BASE64.test(c)))
    return refuse('x5cInvalid');
  const [first, ...rest] = x5c as string[];
  if (rest.length > 1 || (rest[0] !== undefined && !trust.isCa(Buffer.from(rest[0], 'base64')))) refuse('foreignChain');
  // The platform signs configs with the CA key itself; a user never holds that key.
  if (isConfig && trust.isCa(Buffer.from(first!, 'base64'))) return caAsLeaf(trust);
  return trust.readLeaf(first!) ?? refuse('foreignChain');
}

function caAsLeaf(trust: PlatformTrust): IssuedLeaf {
  const ca = trust.certificate;
  return { userId: null, publicKey: ca.publicKey, notBefore: Date.parse(ca.validFrom), notAfter: Date.parse(ca.validTo), weakKey: false };
}

function signatureHolds(token: CompactJws, leaf: IssuedLeaf): boolean {
  return token.signature.length === 64 && verify(null, token.signingInput, leaf.publicKey, token.signature);
}

/** nbf (or iat) ≤ now ≤ exp with a few seconds of skew either way, and at most 60 s between them. */
function checkTimes(claims: Json, nowMs: number): void {
  const { exp, nbf, iat } = claims;
  const start = nbf ?? iat;
  if (!isOperationTime(exp) || !isOperationTime(start) || (iat !== undefined && !isOperationTime(iat))) refuse('timesMissing');
  const now = nowMs / 1000;
  const [expires, begins] = [exp as number, start as number];
  if (begins > now + OPERATION_CLOCK_SKEW_S || (isOperationTime(iat) && iat > now + OPERATION_CLOCK_SKEW_S)) refuse('notYetValid');
  if (expires <= now - OPERATION_CLOCK_SKEW_S) refuse('expired');
  if (expires - begins > OPERATION_MAX_LIFETIME_S) refuse('lifetime');
}

/**
 * What may be used once: the jti, scoped to its verified issuer so two users' ids never collide; without
 * one, the signature itself (Ed25519 signatures are deterministic and Node refuses non-canonical ones).
 */
function useKeyOf(claims: Json, signature: Buffer): string {
  const { jti } = claims;
  if (jti === undefined || jti === null) return `sig:${createHash('sha256').update(signature).digest('base64url')}`;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH || jti.includes('\u0000')) refuse('jti');
  return `jti:${String(claims.iss)}:${String(jti)}`;
}

/** The operation and where the user is: `location` may sit inside the operation or beside it. */
function readOperation(claims: Json): { operation: Operation; location: OperationLocation | undefined } {
  const parsed = operationSchema.safeParse(claims.operation);
  if (!parsed.success) {
    const type = (claims.operation as Json | undefined)?.type;
    const known = typeof type === 'string' && (OPERATION_TYPES as readonly string[]).includes(type);
    return known ? refuse('operationInvalid', `${operationErrors.operationInvalid}: ${parsed.error.issues[0]?.message ?? ''}`) : refuse('unknownOperation');
  }
  let location = parsed.data.location;
  if (!location && claims.location !== undefined) {
    const top = operationLocationSchema.safeParse(claims.location);
    if (!top.success) refuse('operationInvalid', `${operationErrors.operationInvalid}: ${top.error.issues[0]?.message ?? ''}`);
    else location = top.data;
  }
  return { operation: parsed.data, location };
}

export interface ConfigTrust {
  platformCa: PlatformTrust;
  /** The lock this device is bound to: a config for another lock is refused. */
  lockId: string;
  /** The config held now: an older version is ignored. */
  current?: DeviceConfig | null;
  /** Epoch ms; defaults to now. */
  now?: number;
}

/**
 * Checks a config JWS: EdDSA, signed by the platform CA (x5c = [CA]) or by a certificate it issued that
 * names no user, payload a lock config for this lock, version not older than the one held (the same
 * version is accepted again: a retained config arrives again on every reconnect).
 */
export function verifyConfig(jws: string, trust: ConfigTrust): Verdict<{ config: DeviceConfig }> {
  try {
    return { ok: true, config: checkConfig(jws, trust) };
  } catch (error) {
    if (error instanceof Refusal) return refused(error);
    throw error;
  }
}

function checkConfig(jws: string, { platformCa, lockId, current, now = Date.now() }: ConfigTrust): DeviceConfig {
  const token = splitJws(jws, MAX_DEVICE_MESSAGE_BYTES) ?? refuseAsLock(deviceRefusals.configMalformed);
  let signer: IssuedLeaf;
  try {
    signer = signerOf(token, platformCa, true);
  } catch (error) {
    throw error instanceof Refusal ? new Refusal(`${deviceRefusals.configChain}: ${error.message}`) : error;
  }
  // A user's leaf certifies operations, never configs.
  if (signer.userId !== null) refuseAsLock(deviceRefusals.configChain);
  if (now < signer.notBefore || now > signer.notAfter) refuseAsLock(`${deviceRefusals.configChain}: ${operationErrors.certificateExpired}`);
  if (!signatureHolds(token, signer)) refuseAsLock(deviceRefusals.configSignature);
  const parsed = deviceConfigSchema.safeParse(jsonSegment(token.body));
  if (!parsed.success) return refuseAsLock(`${deviceRefusals.configInvalid}: ${parsed.error.issues[0]?.message ?? ''}`);
  const config = parsed.data;
  if (config.lockId !== lockId) refuseAsLock(deviceRefusals.configLock);
  if (current && config.version < current.version) refuseAsLock(`${deviceRefusals.configOlder} (version ${config.version} < ${current.version})`);
  return config;
}
