import { describe, expect, it, vi } from 'vitest';
import { discoveryErrors, type PublicJwk } from '@latchkey/contract';
import { AppError } from '../errors.js';
import { IssuerConfigs, type ConfigLoad } from './issuer-discovery.js';
import { IssuerKeys, JWKS_FAILURE_TTL_SECONDS, JWKS_MAX_TTL_SECONDS, type KeySetLoad } from './issuer-keys.js';

/** The configuration cache on a clock the test moves: it follows a moved jwks_uri and keeps the last good one. */
const ISSUER = 'https://idp.example';
const OLD = 'https://idp.example/jwks';
const NEW = 'https://keys.idp.example/v2';
const key = (kid: string): PublicJwk => ({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid, use: 'sig' });
const refuse = (message: string) => () => {
  throw new AppError(422, message);
};

function harness(configs: (() => ConfigLoad | Promise<ConfigLoad>)[], keySets: Record<string, () => KeySetLoad> = {}) {
  let now = 1_000_000;
  let configReads = 0;
  const keyLoads: string[] = [];
  const clock = () => now;
  const keys = new IssuerKeys({
    clock,
    load: async (jwksUri) => {
      keyLoads.push(jwksUri);
      return (keySets[jwksUri] ?? (() => ({ keys: [key(jwksUri === NEW ? 'new' : 'old')], ttlSeconds: 600 })))();
    },
  });
  const configs2 = new IssuerConfigs(keys, {
    clock,
    load: async () => {
      const answer = configs[Math.min(configReads, configs.length - 1)]!;
      configReads += 1;
      return answer();
    },
  });
  const log = { warn: vi.fn(), info: vi.fn() };
  const stored = { jwksUri: OLD, checkedAt: new Date() };
  return {
    keys,
    configs: configs2,
    log,
    resolve: () => configs2.jwksUriFor(ISSUER, stored, log),
    advance: (seconds: number) => (now += seconds * 1000),
    configReads: () => configReads,
    keyLoads,
  };
}

describe('IssuerConfigs', () => {
  it('keeps a configuration for its max-age, then follows a moved jwks_uri once its key set loads', async () => {
    const h = harness([() => ({ jwksUri: NEW, ttlSeconds: 300 })]);
    h.configs.prime(ISSUER, { jwksUri: OLD, ttlSeconds: 120 });
    h.advance(119);
    expect(await h.resolve()).toEqual({ jwksUri: OLD, problem: null });
    expect(h.configReads()).toBe(0);
    h.advance(1);
    expect(await h.resolve()).toEqual({ jwksUri: NEW, problem: null });
    expect(h.configReads()).toBe(1);
    expect(h.keyLoads).toEqual([NEW]);
    expect(await h.keys.find(NEW, 'new')).toMatchObject({ kid: 'new' });
    expect(h.keyLoads).toEqual([NEW]);
    expect(h.log.info).toHaveBeenCalledWith(expect.objectContaining({ issuer: ISSUER, from: OLD, to: NEW }), expect.any(String));
    // …and the moved one is kept for the new configuration's own max-age.
    h.advance(299);
    await h.resolve();
    expect(h.configReads()).toBe(1);
  });

  it.each([
    ['another issuer', refuse(discoveryErrors.issuerMismatch), discoveryErrors.issuerMismatch],
    ['no jwks_uri', refuse(discoveryErrors.jwksUriMissing), discoveryErrors.jwksUriMissing],
    ['not JSON', refuse(discoveryErrors.configNotJson), discoveryErrors.configNotJson],
    ['an unexpected error', () => Promise.reject(new Error('boom')), discoveryErrors.configUnavailable],
  ])('a configuration that became invalid (%s): the last good jwks_uri, the reason, a warning', async (_name, answer, reason) => {
    const h = harness([answer]);
    h.configs.prime(ISSUER, { jwksUri: OLD, ttlSeconds: 60 });
    h.advance(60);
    expect(await h.resolve()).toEqual({ jwksUri: OLD, problem: reason });
    expect(h.log.warn).toHaveBeenCalledTimes(1);
    expect(h.log.warn.mock.calls[0]![0]).toMatchObject({ issuer: ISSUER, jwksUri: OLD, problem: reason });
  });

  it('a moved jwks_uri whose key set does not load is a bad configuration: the old one stays', async () => {
    const h = harness([() => ({ jwksUri: NEW, ttlSeconds: 300 })], { [NEW]: refuse(discoveryErrors.jwksNoKeys) });
    h.configs.prime(ISSUER, { jwksUri: OLD, ttlSeconds: 60 });
    h.advance(60);
    expect(await h.resolve()).toEqual({ jwksUri: OLD, problem: discoveryErrors.jwksNoKeys });
  });

  it('a failed read is remembered for the failure TTL; the last good one lasts the max TTL from its read, then the reason is an error', async () => {
    const h = harness([refuse(discoveryErrors.configNotFound)]);
    h.configs.prime(ISSUER, { jwksUri: OLD, ttlSeconds: 60 });
    h.advance(60);
    await h.resolve();
    h.advance(JWKS_FAILURE_TTL_SECONDS - 1);
    expect((await h.resolve()).problem).toBe(discoveryErrors.configNotFound);
    expect(h.configReads()).toBe(1);
    h.advance(1);
    await h.resolve();
    expect(h.configReads()).toBe(2);
    // The prime was at 0 s; at the max TTL it is no longer good enough.
    h.advance(JWKS_MAX_TTL_SECONDS - 60 - JWKS_FAILURE_TTL_SECONDS - 1);
    expect((await h.resolve()).jwksUri).toBe(OLD);
    h.advance(1);
    await expect(h.resolve()).rejects.toMatchObject({ statusCode: 422, message: `${discoveryErrors.configExpired}: ${discoveryErrors.configNotFound}` });
  });

  it('a good read after bad ones clears the reason', async () => {
    const h = harness([refuse(discoveryErrors.issuerMismatch), () => ({ jwksUri: OLD, ttlSeconds: 600 })]);
    h.configs.prime(ISSUER, { jwksUri: OLD, ttlSeconds: 60 });
    h.advance(60);
    expect((await h.resolve()).problem).toBe(discoveryErrors.issuerMismatch);
    h.advance(JWKS_FAILURE_TTL_SECONDS);
    expect(await h.resolve()).toEqual({ jwksUri: OLD, problem: null });
    expect(h.keyLoads).toEqual([]);
  });

  it('an instance that has not read it yet reads it first; the stored check counts as its last good read', async () => {
    const h = harness([refuse(discoveryErrors.issuerMismatch)]);
    const fresh = { jwksUri: OLD, checkedAt: new Date(Date.now() - 60 * 60 * 1000) };
    expect(await h.configs.jwksUriFor(ISSUER, fresh, h.log)).toEqual({ jwksUri: OLD, problem: discoveryErrors.issuerMismatch });
    expect(h.configReads()).toBe(1);
    const old = { jwksUri: OLD, checkedAt: new Date(Date.now() - (JWKS_MAX_TTL_SECONDS + 60) * 1000) };
    await expect(h.configs.jwksUriFor('https://other.example', old, h.log)).rejects.toMatchObject({ statusCode: 422 });
  });

  it('concurrent lookups share one read', async () => {
    const h = harness([() => new Promise((r) => setTimeout(() => r({ jwksUri: OLD, ttlSeconds: 600 }), 20))]);
    const all = await Promise.all(Array.from({ length: 5 }, () => h.resolve()));
    expect(all.every((r) => r.jwksUri === OLD && r.problem === null)).toBe(true);
    expect(h.configReads()).toBe(1);
  });

  it('forgetting an issuer drops its configuration and its current key set', async () => {
    const h = harness([() => ({ jwksUri: NEW, ttlSeconds: 600 })]);
    h.configs.prime(ISSUER, { jwksUri: NEW, ttlSeconds: 600 });
    await h.keys.find(NEW, 'new');
    h.configs.forget(ISSUER);
    await h.resolve();
    expect(h.configReads()).toBe(1);
    await h.keys.find(NEW, 'new');
    expect(h.keyLoads).toEqual([NEW, NEW]);
  });
});
