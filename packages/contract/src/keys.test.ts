import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519KeyProblem, messages, parseJwkInput, publicJwkSchema, removeKeySchema } from './index.js';

function jwkOf(type: 'rsa' | 'ec' | 'ed25519', opts: Record<string, unknown> = {}) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node's overloads need a literal type per call
  const pair = generateKeyPairSync(type as any, opts as any) as unknown as { publicKey: KeyObject; privateKey: KeyObject };
  return { pub: pair.publicKey.export({ format: 'jwk' }), priv: pair.privateKey.export({ format: 'jwk' }) };
}

describe('public JWK rules', () => {
  it('accepts RSA 2048, EC P-256 and Ed25519 public keys and defaults use to sig', () => {
    const rsa = jwkOf('rsa', { modulusLength: 2048 }).pub;
    const ec = jwkOf('ec', { namedCurve: 'P-256' }).pub;
    const ed = jwkOf('ed25519').pub;
    for (const key of [rsa, ec, ed]) {
      const r = publicJwkSchema.safeParse({ ...key, kid: 'k1' });
      expect(r.success).toBe(true);
      expect(r.data?.use).toBe('sig');
    }
  });

  it('refuses private keys with a clear message', () => {
    const r = parseJwkInput(JSON.stringify({ ...jwkOf('ec', { namedCurve: 'P-256' }).priv, kid: 'k' }));
    expect(r).toEqual({ ok: false, message: messages.keyPrivateMembers });
  });

  it('refuses short RSA keys, unknown curves, missing kid and symmetric keys', () => {
    const rsa1024 = jwkOf('rsa', { modulusLength: 1024 }).pub;
    expect(parseJwkInput(JSON.stringify({ ...rsa1024, kid: 'k' }))).toEqual({ ok: false, message: messages.keyRsaTooShort });
    expect(parseJwkInput(JSON.stringify({ kty: 'EC', crv: 'P-192', x: 'AA', y: 'AA', kid: 'k' }))).toEqual({
      ok: false,
      message: messages.keyEcCurve,
    });
    expect(parseJwkInput(JSON.stringify(jwkOf('ed25519').pub))).toEqual({ ok: false, message: messages.keyMissingKid });
    expect(parseJwkInput(JSON.stringify({ kty: 'oct', k: 'c2VjcmV0', kid: 'k' }))).toEqual({
      ok: false,
      message: messages.keyPrivateMembers,
    });
  });

  it('reports unparseable input', () => {
    expect(parseJwkInput('{not json')).toEqual({ ok: false, message: messages.keyNotJson });
    expect(parseJwkInput('[1,2]')).toEqual({ ok: false, message: messages.keyNotObject });
  });

  it('names the member that has the wrong type or shape', () => {
    const ed = { ...jwkOf('ed25519').pub, kid: 'k' };
    expect(parseJwkInput(JSON.stringify({ ...ed, x: 5 }))).toEqual({ ok: false, message: '"x" must be a string' });
    expect(parseJwkInput(JSON.stringify({ ...ed, x: 'not+base64url' }))).toEqual({ ok: false, message: '"x" is not base64url' });
    expect(parseJwkInput(JSON.stringify({ ...ed, alg: 'A'.repeat(21) }))).toEqual({ ok: false, message: '"alg" is too long' });
  });

  it('drops unknown members', () => {
    const r = parseJwkInput(JSON.stringify({ ...jwkOf('ed25519').pub, kid: 'k', extra: '<script>' }));
    expect(r.ok && 'extra' in r.key).toBe(false);
  });
});

/** Keys the crypto would take but nobody should trust, kids and algs outside the safe set. */
describe('weak and ill-fitting keys', () => {
  const b64u = (bytes: Uint8Array | number[]) => Buffer.from(bytes).toString('base64url');
  const P = 2n ** 255n - 19n;
  const le32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();
  const ed = () => ({ ...jwkOf('ed25519').pub, kid: 'k' });
  const rsa2048 = jwkOf('rsa', { modulusLength: 2048 }).pub;
  const refused = (key: unknown, message: string) => expect(parseJwkInput(JSON.stringify(key))).toEqual({ ok: false, message });
  const accepted = (key: unknown) => expect(parseJwkInput(JSON.stringify(key)).ok).toBe(true);

  it('refuses RSA exponents 1, even ones and 0, and accepts 3 and 65537', () => {
    for (const e of [[1], [2], [0], [1, 0, 0], [0x01, 0x00, 0x00, 0x00, 0x00]]) refused({ ...rsa2048, kid: 'k', e: b64u(e) }, messages.keyRsaExponent);
    accepted({ ...rsa2048, kid: 'k', e: b64u([3]) });
    accepted({ ...rsa2048, kid: 'k', e: 'AQAB' });
  });

  it('counts RSA modulus bits exactly, and refuses more than 8192 bits', () => {
    const n = Buffer.from(rsa2048.n!, 'base64url');
    const short = Buffer.from(n);
    short[0] = 0x7f; // 2047 bits in 256 bytes
    refused({ ...rsa2048, kid: 'k', n: b64u(short) }, messages.keyRsaTooShort);
    refused({ ...rsa2048, kid: 'k', n: b64u(Buffer.concat([Buffer.from([0xc1]), Buffer.alloc(1024, 0xab)])) }, messages.keyRsaTooLong);
    const even = Buffer.from(n);
    even[even.length - 1]! &= 0xfe;
    refused({ ...rsa2048, kid: 'k', n: b64u(even) }, messages.keyInvalid);
  });

  it('accepts keys on every supported curve and refuses points off the curve', () => {
    for (const namedCurve of ['P-256', 'P-384', 'P-521', 'secp256k1']) {
      const key = { ...jwkOf('ec', { namedCurve }).pub, kid: 'k' };
      accepted(key);
      const y = Buffer.from(key.y!, 'base64url');
      y[y.length - 1]! ^= 1;
      refused({ ...key, y: b64u(y) }, messages.keyEcPoint);
      refused({ ...key, x: b64u(Buffer.alloc(Buffer.from(key.x!, 'base64url').length)) , y: b64u(Buffer.alloc(y.length)) }, messages.keyEcPoint);
    }
  });

  it('refuses Ed25519 x that is not 32 bytes, small-order or non-canonical (the 14 encodings libsodium blocks, and y ≥ p)', () => {
    const order8 = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
    const ys = [0n, 1n, order8, P - order8, P - 1n, P, P + 1n];
    for (const y of ys) {
      for (const sign of [0, 0x80]) {
        const x = le32(y);
        x[31]! |= sign;
        refused({ ...ed(), x: b64u(x) }, messages.keyOkpPoint);
      }
    }
    refused({ ...ed(), x: b64u(le32(P + 5n)) }, messages.keyOkpPoint);
    refused({ ...ed(), x: b64u(Buffer.alloc(31, 1)) }, messages.keyOkpPoint);
    refused({ ...ed(), x: b64u(Buffer.alloc(33, 1)) }, messages.keyOkpPoint);
    expect(ed25519KeyProblem(new Uint8Array(le32(order8)))).toBe('small-order');
    expect(ed25519KeyProblem(new Uint8Array(le32(P + 2n)))).toBe('non-canonical');
    expect(ed25519KeyProblem(new Uint8Array(Buffer.from(ed().x!, 'base64url')))).toBeNull();
  });

  it('the blocked y values are exactly the small-order points (checked by multiplying by 8 on the curve)', () => {
    // Twisted Edwards -x² + y² = 1 + d x² y², extended coordinates: [8]Q is the identity for exactly these y.
    const d = (-121665n * inv(121666n)) % P;
    function inv(a: bigint) {
      return pow(((a % P) + P) % P, P - 2n);
    }
    function pow(b: bigint, e: bigint): bigint {
      let r = 1n;
      for (; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) r = (r * b) % P;
      return r;
    }
    const mod = (a: bigint) => ((a % P) + P) % P;
    const xOf = (y: bigint): bigint | null => {
      const u = mod(y * y - 1n);
      const v = mod(d * y * y + 1n);
      let x = pow(mod(u * inv(v)), (P + 3n) / 8n);
      if (mod(x * x * v - u) !== 0n) x = mod(x * pow(2n, (P - 1n) / 4n));
      return mod(x * x * v - u) === 0n ? x : null;
    };
    const add = ([x1, y1]: bigint[], [x2, y2]: bigint[]) => {
      const t = mod(d * x1! * x2! * y1! * y2!);
      return [mod((x1! * y2! + y1! * x2!) * inv(1n + t)), mod((y1! * y2! + x1! * x2!) * inv(1n - t))];
    };
    const times8 = (p: bigint[]) => add(add(add(p, p), add(p, p)), add(add(p, p), add(p, p)));
    const order8 = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
    for (const y of [0n, 1n, order8, P - order8, P - 1n]) {
      const x = xOf(y)!;
      expect(times8([x, y])).toEqual([0n, 1n]);
      expect(ed25519KeyProblem(new Uint8Array(le32(y)))).toBe('small-order');
    }
    const real = Buffer.from(ed().x!, 'base64url');
    const y = BigInt(`0x${Buffer.from(real).reverse().toString('hex')}`) & ((1n << 255n) - 1n);
    expect(times8([xOf(y)!, y])).not.toEqual([0n, 1n]);
  });

  it('refuses an alg outside the list or one that does not fit the key', () => {
    refused({ ...ed(), alg: 'HS256' }, messages.keyAlgUnknown);
    refused({ ...ed(), alg: 'none' }, messages.keyAlgUnknown);
    refused({ ...ed(), alg: 'RS256' }, messages.keyAlgMismatch);
    refused({ ...rsa2048, kid: 'k', alg: 'ES256' }, messages.keyAlgMismatch);
    refused({ ...rsa2048, kid: 'k', alg: 'EdDSA' }, messages.keyAlgMismatch);
    const p256 = { ...jwkOf('ec', { namedCurve: 'P-256' }).pub, kid: 'k' };
    refused({ ...p256, alg: 'ES384' }, messages.keyAlgMismatch);
    refused({ ...{ ...jwkOf('ec', { namedCurve: 'P-521' }).pub, kid: 'k' }, alg: 'ES256' }, messages.keyAlgMismatch);
    accepted({ ...p256, alg: 'ES256' });
    accepted({ ...{ ...jwkOf('ec', { namedCurve: 'P-384' }).pub, kid: 'k' }, alg: 'ES384' });
    accepted({ ...{ ...jwkOf('ec', { namedCurve: 'P-521' }).pub, kid: 'k' }, alg: 'ES512' });
    accepted({ ...{ ...jwkOf('ec', { namedCurve: 'secp256k1' }).pub, kid: 'k' }, alg: 'ES256K' });
    accepted({ ...ed(), alg: 'EdDSA' });
    for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']) accepted({ ...rsa2048, kid: 'k', alg });
  });

  it('restricts kid to a safe set that real providers’ kids fit', () => {
    for (const kid of [
      'NjVBRjY5MDlCMUIwNzU4RTA2QzZFMDQ4QzQ2MDAyQjVDNjk1RTM2Qg', // Auth0
      '0ad1f57a0e4c9d6fa1d9bb0a3b6a9b1b4a1c2d3e', // Google (hex)
      'kWbkaa6qs8wsTnBwiiNYOhHbnAw', // Azure / Entra
      'lBmJEaVuhydxC-zeDKeyqgCNcZIf9ZAlOKyMcy7TQeE', // Okta / Keycloak (thumbprint)
      'abcdefghijklmnopqrsexample=', // Cognito (base64)
      'u9O7Gq+Lx3v/Q1Z2Ww==',
      '3f1c2b9e-7a4d-4e0f-9c1b-2a3d4e5f6a7b',
      'key-2024-01',
      'arn:aws:kms:eu-west-1:123456789012:key/3f1c2b9e',
      'k.v1_~',
    ])
      expect(publicJwkSchema.safeParse({ ...ed(), kid }).success, kid).toBe(true);
    for (const kid of ['a b', 'a\nb', 'a\rb', 'a\u2028b', 'a\u2029b', 'a\u0000b', 'a\tb', '*/alert(1)/*', '<script>', 'a"b', "a'b", 'a`b', 'x'.repeat(201), 'ключ'])
      refused({ ...ed(), kid }, kid.length > 200 ? messages.tooLong : messages.keyKidInvalid);
    // Surrounding white space is trimmed, as before.
    expect(publicJwkSchema.parse({ ...ed(), kid: ' k1 ' }).kid).toBe('k1');
  });

  it('a key to remove is named by a kid of the same rule: at most 200 characters of the safe set', () => {
    expect(removeKeySchema.parse({ kid: ' key-2024-01 ' })).toEqual({ kid: 'key-2024-01' });
    expect(removeKeySchema.safeParse({ kid: 'x'.repeat(200) }).success).toBe(true);
    const messagesOf = (kid: string) => removeKeySchema.safeParse({ kid }).error?.issues.map((i) => i.message) ?? [];
    expect(messagesOf('x'.repeat(201))).toContain(messages.tooLong);
    for (const kid of ['a b', 'a\u0000b', 'a\nb', 'a\u202Eb', '*/alert(1)/*', 'ключ']) expect(messagesOf(kid), kid).toContain(messages.keyKidInvalid);
    expect(messagesOf('a\u0000b')).toContain(messages.controlCharacters);
    expect(messagesOf('')).toContain(messages.required);
  });

  it('refuses a key whose exp has passed when it is pasted', () => {
    const now = 1_800_000_000;
    expect(parseJwkInput(JSON.stringify({ ...ed(), exp: now - 1 }), now)).toEqual({ ok: false, message: messages.keyExpired });
    expect(parseJwkInput(JSON.stringify({ ...ed(), exp: now + 60 }), now).ok).toBe(true);
  });
});
