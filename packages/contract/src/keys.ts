import * as z from 'zod/mini';
import { messages } from './messages.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const EC_CURVES = ['P-256', 'P-384', 'P-521', 'secp256k1'] as const;
const MIN_RSA_BITS = 2048;
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

function base64UrlBits(value: string): number {
  const std = value.replace(/-/g, '+').replace(/_/g, '/');
  let raw: string;
  try {
    raw = atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  } catch {
    return 0;
  }
  // Leading zero bytes do not count toward the modulus size.
  let zeros = 0;
  while (zeros < raw.length && raw.charCodeAt(zeros) === 0) zeros++;
  return (raw.length - zeros) * 8;
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
        .check(z.trim(), z.minLength(1, messages.keyMissingKid), z.maxLength(200, messages.tooLong)),
      use: member('use', 20),
      alg: member('alg', 20),
      crv: member('crv', 20),
      x: member('x', 200, BASE64URL),
      y: member('y', 200, BASE64URL),
      n: member('n', 2000, BASE64URL),
      e: member('e', 20, BASE64URL),
      // Not in RFC 7517: the platform's own member (issue 19). Seconds since 1970, like a token's `exp`.
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
        switch (key.kty) {
          case 'RSA':
            if (!key.n || !key.e) ctx.addIssue({ code: 'custom', message: messages.keyRsaMembers, path: ['n'] });
            else if (base64UrlBits(key.n) < MIN_RSA_BITS) ctx.addIssue({ code: 'custom', message: messages.keyRsaTooShort, path: ['n'] });
            break;
          case 'EC':
            if (!EC_CURVES.includes(key.crv as (typeof EC_CURVES)[number]))
              ctx.addIssue({ code: 'custom', message: messages.keyEcCurve, path: ['crv'] });
            else if (!key.x || !key.y) ctx.addIssue({ code: 'custom', message: messages.keyEcMembers, path: ['x'] });
            break;
          case 'OKP':
            if (key.crv !== 'Ed25519') ctx.addIssue({ code: 'custom', message: messages.keyOkpCurve, path: ['crv'] });
            else if (!key.x) ctx.addIssue({ code: 'custom', message: messages.keyOkpMembers, path: ['x'] });
            break;
          default:
            ctx.addIssue({ code: 'custom', message: messages.keyUnsupportedType, path: ['kty'] });
        }
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

export const removeKeySchema = z.object({
  kid: z.string({ error: messages.required }).check(z.trim(), z.minLength(1, messages.required)),
});

/** Parse what an owner pasted into the add-key dialog: JSON first, then the key rules. */
export function parseJwkInput(text: string): { ok: true; key: PublicJwk } | { ok: false; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: messages.keyNotJson };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, message: messages.keyNotObject };
  const result = publicJwkSchema.safeParse(json);
  if (!result.success) return { ok: false, message: result.error.issues[0]?.message ?? messages.keyUnsupportedType };
  return { ok: true, key: result.data };
}

/** GET /.well-known/jwks.json: the public keys the portal's own tokens are signed with (RFC 7517). */
export const jwksSchema = z.object({
  keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig') })),
});
export type Jwks = z.infer<typeof jwksSchema>;
