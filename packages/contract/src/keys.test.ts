import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { messages, parseJwkInput, publicJwkSchema } from './index.js';

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
