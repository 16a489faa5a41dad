import * as z from 'zod/mini';
import { messages } from './messages.js';
import { checkText } from './text.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const MIN_RSA_BITS = 2048;
/** Beyond this a key is a mistake or a way to make every verification slow. */
const MAX_RSA_BITS = 8192;
/** An optional string member of a pasted key; its own name in every message, since the dialog shows one line. */
const member = (name: string, max: number, pattern?: RegExp) =>
  z.optional(
    z
      .string({ error: `"${name}" must be a string` })
      .check(
        z.maxLength(max, `"${name}" is too long`),
        ...(pattern ? [z.regex(pattern, `"${name}" is not base64url`)] : []),
      ),
  );
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** 9999-12-31: a key's `exp` beyond it is a typo (milliseconds, most likely). */
const MAX_EXP = 253_402_300_799;

/**
 * What a key id may hold: what real providers' kids are made of — base64url and base64
 * thumbprints (Auth0, Azure, Okta, Keycloak, Cognito), hex (Google), UUIDs, names like "key-2024-01",
 * ARNs — and nothing that breaks a line, a quoted string or a code comment where the portal shows it.
 */
export const KID_PATTERN = /^[A-Za-z0-9._~:+/=-]+$/;
export const MAX_KID_LENGTH = 200;

/** The signature algorithms a key may name, by what it is (RFC 7518, RFC 8037, RFC 8812, RFC 9864). */
export const RSA_KEY_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
export const EC_KEY_ALGS = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512', secp256k1: 'ES256K' } as const;
export const OKP_KEY_ALGS = { Ed25519: ['EdDSA', 'Ed25519'] } as const;
export const KEY_ALGS: readonly string[] = [...RSA_KEY_ALGS, ...Object.values(EC_KEY_ALGS), ...OKP_KEY_ALGS.Ed25519];

/** Short Weierstrass curves y² = x³ + ax + b (mod p) and their coordinate size in bytes. */
const EC_CURVES: Record<keyof typeof EC_KEY_ALGS, { p: bigint; a: bigint; b: bigint; bytes: number }> = {
  'P-256': {
    p: 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n,
    a: -3n,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
    bytes: 32,
  },
  'P-384': {
    p: 2n ** 384n - 2n ** 128n - 2n ** 96n + 2n ** 32n - 1n,
    a: -3n,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
    bytes: 48,
  },
  'P-521': {
    p: 2n ** 521n - 1n,
    a: -3n,
    b: 0x0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
    bytes: 66,
  },
  secp256k1: { p: 2n ** 256n - 2n ** 32n - 977n, a: 0n, b: 7n, bytes: 32 },
};

function base64UrlBytes(value: string): Uint8Array | null {
  const std = value.replace(/-/g, '+').replace(/_/g, '/');
  let raw: string;
  try {
    raw = atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  } catch {
    return null;
  }
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

const bigEndian = (bytes: Uint8Array) => bytes.reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);

/** The exact bit length of a big-endian unsigned integer (leading zeros do not count). */
function bitLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]!));
}

/** RSA `n`, `e`: a usable size, and an exponent that is odd and at least 3 (e = 1 makes every "signature" verify). */
function rsaProblem(n: string, e: string): string | null {
  const modulus = base64UrlBytes(n);
  const bits = modulus ? bitLength(modulus) : 0;
  if (bits < MIN_RSA_BITS) return messages.keyRsaTooShort;
  if (bits > MAX_RSA_BITS) return messages.keyRsaTooLong;
  // A product of two large primes is odd; an even modulus has the factor 2 for everyone to see.
  if ((modulus![modulus!.length - 1]! & 1) === 0) return messages.keyInvalid;
  const exponent = base64UrlBytes(e);
  const value = exponent ? bigEndian(exponent) : 0n;
  if (value < 3n || value % 2n === 0n || value >= bigEndian(modulus!)) return messages.keyRsaExponent;
  return null;
}

/** Whether (x, y) is a point of the curve (so not the point at infinity, nor off the curve: invalid-curve attacks). */
function isOnCurve(crv: keyof typeof EC_CURVES, xText: string, yText: string): boolean {
  const { p, a, b, bytes } = EC_CURVES[crv];
  const xb = base64UrlBytes(xText);
  const yb = base64UrlBytes(yText);
  if (!xb || !yb || xb.length > bytes || yb.length > bytes) return false;
  const x = bigEndian(xb);
  const y = bigEndian(yb);
  if (x >= p || y >= p) return false;
  const mod = (v: bigint) => ((v % p) + p) % p;
  return mod(y * y) === mod(x * x * x + a * x + b);
}

const ED25519_P = 2n ** 255n - 19n;
/** y of the two points of order 8 (the other small-order points have y = 0, 1 and p − 1). */
const ED25519_ORDER_8_Y = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
const ED25519_SMALL_ORDER_Y = new Set([0n, 1n, ED25519_P - 1n, ED25519_ORDER_8_Y, ED25519_P - ED25519_ORDER_8_Y]);

/**
 * What is wrong with an Ed25519 public key (its 32 encoded bytes), or null. A point of small
 * order (the identity, all zeros, …) verifies "signatures" nobody made, so no one holds its private key;
 * a non-canonical encoding (y ≥ p) names the same point twice. The check is libsodium's: y (the sign bit
 * cleared) must be below p and none of the five small-order points' y — which blocks the 14 encodings
 * its list names, with either sign bit, and every other y ≥ p besides.
 */
export function ed25519KeyProblem(bytes: Uint8Array): 'length' | 'non-canonical' | 'small-order' | null {
  if (bytes.length !== 32) return 'length';
  const y = bigEndian(Uint8Array.from(bytes).reverse()) & ((1n << 255n) - 1n);
  if (y >= ED25519_P) return 'non-canonical';
  if (ED25519_SMALL_ORDER_Y.has(y)) return 'small-order';
  return null;
}

function okpProblem(x: string): string | null {
  const bytes = base64UrlBytes(x);
  return bytes && ed25519KeyProblem(bytes) === null ? null : messages.keyOkpPoint;
}

type KeyMembers = { kty: string; crv?: string; x?: string; y?: string; n?: string; e?: string };

/** What is wrong with the key material for its type, and the member to point at; null when it is usable. */
function typeProblem(key: KeyMembers): [string, string] | null {
  switch (key.kty) {
    case 'RSA': {
      if (!key.n || !key.e) return [messages.keyRsaMembers, 'n'];
      const problem = rsaProblem(key.n, key.e);
      return problem ? [problem, problem === messages.keyRsaExponent ? 'e' : 'n'] : null;
    }
    case 'EC':
      if (key.crv === undefined || !Object.hasOwn(EC_CURVES, key.crv)) return [messages.keyEcCurve, 'crv'];
      if (!key.x || !key.y) return [messages.keyEcMembers, 'x'];
      return isOnCurve(key.crv as keyof typeof EC_CURVES, key.x, key.y) ? null : [messages.keyEcPoint, 'y'];
    case 'OKP':
      if (key.crv !== 'Ed25519') return [messages.keyOkpCurve, 'crv'];
      if (!key.x) return [messages.keyOkpMembers, 'x'];
      return okpProblem(key.x) ? [messages.keyOkpPoint, 'x'] : null;
    default:
      return [messages.keyUnsupportedType, 'kty'];
  }
}

/** null when `alg` is absent or names an algorithm this key can sign with. */
function algProblem(key: { kty: string; crv?: string; alg?: string }): string | null {
  if (key.alg === undefined) return null;
  if (!KEY_ALGS.includes(key.alg)) return messages.keyAlgUnknown;
  const fits =
    key.kty === 'RSA'
      ? (RSA_KEY_ALGS as readonly string[]).includes(key.alg)
      : key.kty === 'EC'
        ? EC_KEY_ALGS[key.crv as keyof typeof EC_KEY_ALGS] === key.alg
        : key.kty === 'OKP' && key.crv === 'Ed25519' && (OKP_KEY_ALGS.Ed25519 as readonly string[]).includes(key.alg);
  return fits ? null : messages.keyAlgMismatch;
}

/**
 * A public JSON Web Key as the platform stores it. Private members are refused, not stripped, so an
 * owner who pasted a private key by mistake learns it at once.
 */
export const publicJwkSchema = z.pipe(
  z
    .looseObject({
      kty: z.string({ error: messages.keyUnsupportedType }),
      kid: z
        .string({ error: messages.keyMissingKid })
        .check(
          z.trim(),
          z.minLength(1, messages.keyMissingKid),
          z.maxLength(MAX_KID_LENGTH, messages.tooLong),
          z.regex(KID_PATTERN, messages.keyKidInvalid),
        ),
      use: member('use', 20),
      alg: member('alg', 20),
      crv: member('crv', 20),
      x: member('x', 200, BASE64URL),
      y: member('y', 200, BASE64URL),
      n: member('n', 2000, BASE64URL),
      e: member('e', 20, BASE64URL),
      // Not in RFC 7517: the platform's own member. Seconds since 1970, like a token's `exp`.
      exp: z.optional(
        z.number({ error: messages.keyExp }).check(z.refine(Number.isInteger, messages.keyExp), z.gt(0, messages.keyExp), z.lte(MAX_EXP, messages.keyExp)),
      ),
    })
    .check(
      z.superRefine((key, ctx) => {
        const present = PRIVATE_MEMBERS.filter((m) => m in key);
        if (present.length > 0) {
          ctx.addIssue({ code: 'custom', message: messages.keyPrivateMembers, path: [present[0]!] });
          return;
        }
        if (key.use !== undefined && key.use !== 'sig') ctx.addIssue({ code: 'custom', message: messages.keyUse, path: ['use'] });
        const [problem, path] = typeProblem(key) ?? [algProblem(key), 'alg'];
        if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [path] });
      }),
    ),
  z.transform((key) => {
    // Keep only the public members the platform knows; unknown extras are dropped.
    const out: Record<string, string | number> = { kty: key.kty, kid: key.kid, use: key.use ?? 'sig' };
    for (const m of ['alg', 'crv', 'x', 'y', 'n', 'e'] as const) {
      const v = key[m];
      if (typeof v === 'string') out[m] = v;
    }
    if (typeof key.exp === 'number') out.exp = key.exp;
    return out as unknown as PublicJwk;
  }),
);

export interface PublicJwk {
  kty: 'RSA' | 'EC' | 'OKP';
  kid: string;
  use: 'sig';
  alg?: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  /** When the platform stops accepting this key: seconds since 1970 (the platform's own member). */
  exp?: number;
}

/** The key to remove, by its id: the same rule as a key's own `kid` (its length, the text rule, the safe set). */
export const removeKeySchema = z.object({
  kid: z
    .string({ error: messages.required })
    .check(z.trim(), z.minLength(1, messages.required), z.maxLength(MAX_KID_LENGTH, messages.tooLong), checkText(), z.regex(KID_PATTERN, messages.keyKidInvalid)),
});

/** A key whose `exp` has passed is refused where keys are added (it could never verify anything). */
export const isKeyExpired = (key: Pick<PublicJwk, 'exp'>, nowSeconds: number): boolean => key.exp !== undefined && key.exp <= nowSeconds;

/** Parse what an owner pasted into the add-key dialog: JSON first, then the key rules. */
export function parseJwkInput(text: string, nowSeconds = Math.floor(Date.now() / 1000)): { ok: true; key: PublicJwk } | { ok: false; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: messages.keyNotJson };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, message: messages.keyNotObject };
  const result = publicJwkSchema.safeParse(json);
  if (!result.success) return { ok: false, message: result.error.issues[0]?.message ?? messages.keyUnsupportedType };
  if (isKeyExpired(result.data, nowSeconds)) return { ok: false, message: messages.keyExpired };
  return { ok: true, key: result.data };
}

/** GET /.well-known/jwks.json: the public keys the portal's own tokens are signed with (RFC 7517). */
export const jwksSchema = z.object({
  keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig') })),
});
export type Jwks = z.infer<typeof jwksSchema>;
