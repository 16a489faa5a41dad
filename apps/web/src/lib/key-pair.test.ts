import { parseJwkInput, publicJwkSchema } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { generateAuthKeyPair, jwkThumbprint, privateKeyFile, privateKeyFileName } from './key-pair';

describe('a key pair generated in the browser', () => {
  it.each(['Ed25519', 'ES256'] as const)('%s: the public half passes the contract as is, kid = its RFC 7638 thumbprint, alg fitting', async (kind) => {
    const pair = await generateAuthKeyPair(kind);
    const parsed = parseJwkInput(JSON.stringify(pair.publicJwk));
    expect(parsed).toEqual({ ok: true, key: pair.publicJwk });
    expect(pair.publicJwk.alg).toBe(kind === 'Ed25519' ? 'EdDSA' : 'ES256');
    expect(pair.publicJwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pair.publicJwk.kid).toBe(await jwkThumbprint(pair.publicJwk as JsonWebKey));
    expect(publicJwkSchema.safeParse(pair.publicJwk).success).toBe(true);
    // The public key carries no private member; the private file does, with the same kid and alg.
    expect(pair.publicJwk).not.toHaveProperty('d');
    expect(pair.privateJwk).toMatchObject({ kid: pair.publicJwk.kid, alg: pair.publicJwk.alg, x: pair.publicJwk.x });
    expect(pair.privateJwk.d).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(pair.privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PRIVATE KEY-----\n$/);
  });

  it('signs what the public half verifies (the private file is the key)', async () => {
    const pair = await generateAuthKeyPair('ES256');
    const params = { name: 'ECDSA', namedCurve: 'P-256' };
    const priv = await crypto.subtle.importKey('jwk', { ...pair.privateJwk, alg: undefined, kid: undefined, use: undefined } as JsonWebKey, params, false, ['sign']);
    const pub = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: pair.publicJwk.x, y: pair.publicJwk.y } as JsonWebKey, params, false, ['verify']);
    const data = new TextEncoder().encode('unlock');
    const sig = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, priv, data);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, pub, sig, data)).toBe(true);
  });

  it('RFC 7638 §3.1 example thumbprint', async () => {
    // RFC 7638's example is RSA; for OKP, RFC 8037 A.3's Ed25519 key and thumbprint.
    expect(await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('names the file after the kid, safely', async () => {
    expect(privateKeyFileName('abc-DEF_1')).toBe('latchkey-abc-DEF_1.private.jwk.json');
    expect(privateKeyFileName('arn:aws:kms/x', 'pem')).toBe('latchkey-arn_aws_kms_x.private.pem');
    const pair = await generateAuthKeyPair('Ed25519');
    expect(JSON.parse(privateKeyFile(pair, 'jwk').text)).toEqual(pair.privateJwk);
  });
});
