import { describe, expect, it } from 'vitest';
import { discoveryErrors, type PublicJwk } from '@latchkey/contract';
import { AppError } from '../errors.js';
import { IssuerKeys, JWKS_DEFAULT_TTL_SECONDS, JWKS_MAX_TTL_SECONDS, JWKS_MIN_TTL_SECONDS, jwksTtlSeconds, signingKeysOf, type KeySetLoad } from './issuer-keys.js';

/** The key-set cache on a clock the test moves: Cache-Control decides how long a set is kept, within bounds. */
const key = (kid: string): PublicJwk => ({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid, use: 'sig' });

function harness(answers: (() => KeySetLoad | Promise<KeySetLoad>)[]) {
  let now = 1_000_000;
  let loads = 0;
  const cache = new IssuerKeys({
    clock: () => now,
    load: async () => {
      const answer = answers[Math.min(loads, answers.length - 1)]!;
      loads += 1;
      return answer();
    },
  });
  return { cache, advance: (seconds: number) => (now += seconds * 1000), loads: () => loads };
}

describe('jwksTtlSeconds', () => {
  it.each([
    [null, JWKS_DEFAULT_TTL_SECONDS],
    ['', JWKS_DEFAULT_TTL_SECONDS],
    ['public, max-age=300', 300],
    ['max-age="900", must-revalidate', 900],
    ['Max-Age=120', 120],
    ['max-age=5', JWKS_MIN_TTL_SECONDS],
    ['max-age=0', JWKS_MIN_TTL_SECONDS],
    ['no-store', JWKS_MIN_TTL_SECONDS],
    ['no-cache, max-age=3600', JWKS_MIN_TTL_SECONDS],
    ['max-age=31536000', JWKS_MAX_TTL_SECONDS],
    ['max-age=abc', JWKS_DEFAULT_TTL_SECONDS],
  ])('%j → %i s', (header, seconds) => {
    expect(jwksTtlSeconds(header)).toBe(seconds);
  });
});

describe('signingKeysOf', () => {
  it('keeps usable public signing keys only', () => {
    const keys = signingKeysOf({
      keys: [key('a'), { ...key('enc'), use: 'enc' }, { kty: 'oct', k: 'c2VjcmV0', kid: 'sym' }, { ...key('priv'), d: 'secret' }, 'junk', { ...key('b'), x5c: ['MII…'] }],
    });
    expect(keys?.map((k) => k.kid)).toEqual(['a', 'b']);
    expect(keys?.[1]).not.toHaveProperty('x5c');
  });
  it.each([null, [], { keys: {} }, { nokeys: [] }, 'text'])('%j is not a key set', (doc) => {
    expect(signingKeysOf(doc)).toBeNull();
  });
});

describe('IssuerKeys', () => {
  it('serves a set for its max-age, then loads it again', async () => {
    const h = harness([() => ({ keys: [key('a')], ttlSeconds: 300 })]);
    expect(await h.cache.find('https://idp.example/jwks', 'a')).toMatchObject({ kid: 'a' });
    h.advance(299);
    expect(await h.cache.find('https://idp.example/jwks', 'a')).toMatchObject({ kid: 'a' });
    expect(h.loads()).toBe(1);
    h.advance(2);
    expect(await h.cache.find('https://idp.example/jwks', 'a')).toMatchObject({ kid: 'a' });
    expect(h.loads()).toBe(2);
  });

  it('a primed set needs no load', async () => {
    const h = harness([() => ({ keys: [], ttlSeconds: 60 })]);
    h.cache.prime('https://idp.example/jwks', { keys: [key('a')], ttlSeconds: 600 });
    expect(await h.cache.find('https://idp.example/jwks', 'a')).toMatchObject({ kid: 'a' });
    expect(h.loads()).toBe(0);
  });

  it('an unknown kid reloads a set older than the minimum TTL (rotation), but not a fresher one', async () => {
    const h = harness([() => ({ keys: [key('a')], ttlSeconds: 3600 }), () => ({ keys: [key('a'), key('b')], ttlSeconds: 3600 })]);
    await h.cache.find('https://idp.example/jwks', 'a');
    h.advance(JWKS_MIN_TTL_SECONDS - 1);
    expect(await h.cache.find('https://idp.example/jwks', 'b')).toBeNull();
    expect(h.loads()).toBe(1);
    h.advance(1);
    expect(await h.cache.find('https://idp.example/jwks', 'b')).toMatchObject({ kid: 'b' });
    expect(h.loads()).toBe(2);
    // …and the reloaded set is fresh again: another unknown kid does not load a third time.
    expect(await h.cache.find('https://idp.example/jwks', 'c')).toBeNull();
    expect(h.loads()).toBe(2);
  });

  it('concurrent lookups share one load', async () => {
    const h = harness([() => new Promise((r) => setTimeout(() => r({ keys: [key('a')], ttlSeconds: 600 }), 20))]);
    const found = await Promise.all(Array.from({ length: 5 }, () => h.cache.find('https://idp.example/jwks', 'a')));
    expect(found.every((k) => k?.kid === 'a')).toBe(true);
    expect(h.loads()).toBe(1);
  });

  it('a failed load is remembered for a while, with its message', async () => {
    const h = harness([
      () => {
        throw new AppError(422, discoveryErrors.jwksInvalid);
      },
      () => ({ keys: [key('a')], ttlSeconds: 600 }),
    ]);
    await expect(h.cache.find('https://idp.example/jwks', 'a')).rejects.toMatchObject({ statusCode: 422, message: discoveryErrors.jwksInvalid });
    await expect(h.cache.find('https://idp.example/jwks', 'a')).rejects.toMatchObject({ message: discoveryErrors.jwksInvalid });
    expect(h.loads()).toBe(1);
    h.advance(31);
    expect(await h.cache.find('https://idp.example/jwks', 'a')).toMatchObject({ kid: 'a' });
    expect(h.loads()).toBe(2);
  });
});
