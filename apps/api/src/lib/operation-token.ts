import { createHash, verify as verifySignature } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  ed25519KeyProblem,
  MAX_JTI_LENGTH,
  MAX_OPERATION_LENGTH,
  OPERATION_CLOCK_SKEW_S,
  OPERATION_MAX_LIFETIME_S,
  OPERATION_TYPES,
  operationErrors,
  operationLocationSchema,
  isOperationTime,
  operationSchema,
  type OperationErrorKey,
} from '@latchkey/contract';
import { OperationRefusal, logTypeOf, type VerifiedOperation } from './operation-outcome.js';
import { ed25519X, type IssuedLeaf, type PlatformCa } from '../plugins/platform-ca.js';

/**
 * Reads and verifies a signed operation (POST /device/{lockId}/execute). Nothing in it is trusted before
 * its signature is checked against a certificate our CA issued: the header is read only to find that
 * certificate, and the algorithm is fixed (Ed25519), never taken from the token. Both encodings the
 * platform's SDKs send are accepted: base64url segments (current clients) and standard base64 with
 * padding (older ones); the signature covers the segments exactly as they arrived.
 */

const SEGMENT = /^(?:[A-Za-z0-9_-]+|[A-Za-z0-9+/]+={0,2})$/;
const STANDARD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const ALGORITHMS = new Set(['EdDSA', 'Ed25519']);
type Json = Record<string, unknown>;

function jsonObject(segment: string): Json | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** A refusal with its catalogue key; its reason is the key's text unless given (the text with a detail after it). */
type Refuse = (status: number, kind: OperationErrorKey, reason?: string) => OperationRefusal;

/** exp, nbf, iat: epoch seconds within the contract's bounds (1970 … 9999); anything else is timesMissing. */
const isTime = isOperationTime;

export class OperationVerifier {
  /** Leaves already verified against the CA, by their base64 text: the chain check runs once per leaf. */
  private readonly leaves = new LRUCache<string, IssuedLeaf>({ max: 10_000 });
  /** Headers already accepted, by their encoded text: a device sends the same one with every operation. */
  private readonly headers = new LRUCache<string, IssuedLeaf>({ max: 10_000 });

  constructor(private readonly ca: PlatformCa) {}

  /** The verified operation; throws OperationRefusal saying why not. `callerId` is the signed-in user. */
  verify(jws: string, lockId: string, callerId: string, nowMs = Date.now()): VerifiedOperation {
    const parts = jws.length <= MAX_OPERATION_LENGTH ? jws.trim().split('.') : [];
    const [head = '', body = '', signature = ''] = parts;
    const unverified = body && SEGMENT.test(body) ? jsonObject(body) : null;
    const refuse: Refuse = (status, kind, reason = operationErrors[kind]) => new OperationRefusal(status, reason, logTypeOf(unverified?.operation), { kind });
    if (parts.length !== 3 || !SEGMENT.test(head) || !SEGMENT.test(body) || !SEGMENT.test(signature)) throw refuse(400, 'malformed');

    const leaf = this.headers.get(head) ?? this.acceptHeader(head, refuse);
    if (nowMs < leaf.notBefore) throw refuse(403, 'certificateNotYetValid');
    if (nowMs > leaf.notAfter) throw refuse(403, 'certificateExpired');
    const signatureBytes = Buffer.from(signature, 'base64');
    if (signatureBytes.length !== 64 || !verifySignature(null, Buffer.from(`${head}.${body}`), leaf.publicKey, signatureBytes))
      throw refuse(403, 'signature');

    // Verified from here on.
    const claims = unverified;
    if (!claims) throw refuse(400, 'claimsInvalid');
    if (claims.iss !== leaf.userId) throw refuse(403, 'issuer');
    if (claims.iss !== callerId) throw refuse(403, 'caller');
    if (claims.sub !== lockId) throw refuse(403, 'subject');
    const rememberUntil = checkTimes(claims, nowMs, refuse);
    const useKey = useKeyOf(claims, signatureBytes, refuse);

    const parsed = operationSchema.safeParse(claims.operation);
    if (!parsed.success) {
      const type = (claims.operation as Json | undefined)?.type;
      const known = typeof type === 'string' && (OPERATION_TYPES as readonly string[]).includes(type);
      throw known ? refuse(400, 'operationInvalid', `${operationErrors.operationInvalid}: ${parsed.error.issues[0]?.message ?? ''}`) : refuse(400, 'unknownOperation');
    }
    let location = parsed.data.location;
    if (!location && claims.location !== undefined) {
      const top = operationLocationSchema.safeParse(claims.location);
      if (!top.success) throw refuse(400, 'operationInvalid', `${operationErrors.operationInvalid}: ${top.error.issues[0]?.message ?? ''}`);
      location = top.data;
    }
    return { operation: parsed.data, location, useKey, rememberUntil, certifiedFrom: leaf.notBefore };
  }

  /** The header's leaf, if the header is well-formed, says EdDSA and JWT, and carries a chain to our CA. */
  private acceptHeader(head: string, refuse: Refuse): IssuedLeaf {
    const header = jsonObject(head);
    if (!header) throw refuse(400, 'headerInvalid');
    if (typeof header.alg !== 'string' || !ALGORITHMS.has(header.alg)) throw refuse(400, 'algorithm');
    // One SDK names the type `type`; either, when present, must say JWT. Unknown critical extensions are refused.
    for (const type of [header.typ, header.type]) {
      if (type !== undefined && (typeof type !== 'string' || type.toUpperCase() !== 'JWT')) throw refuse(400, 'type');
    }
    if (header.crit !== undefined) throw refuse(400, 'headerInvalid');
    const leaf = this.leafOf(header.x5c, refuse);
    this.headers.set(head, leaf);
    return leaf;
  }

  /** The leaf of `x5c` if our CA issued it; the optional second certificate must be our CA's own. */
  private leafOf(x5c: unknown, refuse: Refuse): IssuedLeaf {
    if (x5c === undefined || (Array.isArray(x5c) && x5c.length === 0)) throw refuse(400, 'x5cMissing');
    if (!Array.isArray(x5c) || x5c.length > 3 || !x5c.every((c) => typeof c === 'string' && c.length < 8192 && STANDARD_BASE64.test(c)))
      throw refuse(400, 'x5cInvalid');
    const [leafText, ...rest] = x5c as string[];
    if (rest.length > 1 || (rest[0] !== undefined && !this.ca.isCaCertificate(Buffer.from(rest[0], 'base64')))) throw refuse(403, 'foreignChain');
    const cached = this.leaves.get(leafText!);
    if (cached) return cached;
    const leaf = this.ca.readLeaf(Buffer.from(leafText!, 'base64'));
    if (!leaf) throw refuse(403, 'foreignChain');
    // /auth/certificate no longer certifies small-order keys; one certified before is refused here.
    if (ed25519KeyProblem(Buffer.from(ed25519X(leaf.publicKey), 'base64url'))) throw refuse(403, 'certificateKeyWeak');
    this.leaves.set(leafText!, leaf);
    return leaf;
  }
}

/** nbf (or iat) ≤ now ≤ exp with a few seconds of skew, and at most 60 s between them. Returns exp + skew in ms. */
function checkTimes(claims: Json, nowMs: number, refuse: Refuse): number {
  const { exp, nbf, iat } = claims;
  const start = nbf ?? iat;
  if (!isTime(exp) || !isTime(start) || (iat !== undefined && !isTime(iat))) throw refuse(400, 'timesMissing');
  const now = nowMs / 1000;
  if (start > now + OPERATION_CLOCK_SKEW_S || (isTime(iat) && iat > now + OPERATION_CLOCK_SKEW_S)) throw refuse(403, 'notYetValid');
  if (exp <= now - OPERATION_CLOCK_SKEW_S) throw refuse(403, 'expired');
  if (exp - start > OPERATION_MAX_LIFETIME_S) throw refuse(403, 'lifetime');
  return (exp + OPERATION_CLOCK_SKEW_S) * 1000;
}

/**
 * The jti is scoped to its (verified) issuer, so two users' ids never collide. Without one, the signature
 * is the operation's identity: Ed25519 signatures are deterministic and OpenSSL refuses non-canonical
 * ones, so the same operation cannot be sent again under a second signature.
 */
function useKeyOf(claims: Json, signature: Buffer, refuse: Refuse): string {
  const { jti } = claims;
  if (jti === undefined || jti === null) return `sig:${createHash('sha256').update(signature).digest('base64url')}`;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH || jti.includes('\u0000')) throw refuse(400, 'jti');
  return `jti:${String(claims.iss)}:${jti}`;
}
