import { LRUCache } from 'lru-cache';
import { discoveryErrors, publicJwkSchema, type PublicJwk } from '@latchkey/contract';
import { AppError } from '../errors.js';
import { OutboundError, type Outbound } from './outbound.js';

/**
 * Auth domains added with discovery: their key set (`jwks_uri`) is read through the outbound
 * guard whenever a token needs a kid that no uploaded key has, and kept for as long as the key set's own
 * Cache-Control says, within bounds. Which `jwks_uri` that is, the issuer's OpenID configuration says:
 * `issuer-discovery.ts` reads it when the owner adds the domain and again whenever it expires.
 */

/** A key set is kept at least this long, whatever its headers say (no-store included): issuers are not hammered. */
export const JWKS_MIN_TTL_SECONDS = 60;
/** …and at most this long, so a rotated-out key stops verifying within a day. */
export const JWKS_MAX_TTL_SECONDS = 24 * 60 * 60;
/** Without a max-age. */
export const JWKS_DEFAULT_TTL_SECONDS = 10 * 60;
/** A failed load is remembered this long, so a dead issuer costs one call, not one per token. */
export const JWKS_FAILURE_TTL_SECONDS = 30;
/** How big and how slow a discovery document may be; anything bigger or slower is refused by the guard. */
export interface DiscoveryLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** Documents are small and issuers quick. Each app copies these (app.issuers.limits); tests shorten its own. */
export const DEFAULT_DISCOVERY_LIMITS: Readonly<DiscoveryLimits> = { maxBytes: 256 * 1024, timeoutMs: 5_000 };

/** Seconds from a Cache-Control header, bounded; null header or no max-age → the default. */
export function jwksTtlSeconds(cacheControl: string | null): number {
  let seconds = JWKS_DEFAULT_TTL_SECONDS;
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) seconds = 0;
  else {
    const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find(Boolean);
    if (maxAge) seconds = Number(maxAge[1]);
  }
  return Math.min(JWKS_MAX_TTL_SECONDS, Math.max(JWKS_MIN_TTL_SECONDS, seconds));
}

export const fail = (status: 400 | 422, message: string) => new AppError(status, message);

/** GET a discovery document (configuration or key set) through the guard; the body only when it answered 200. */
export async function getJson(
  outbound: Outbound,
  url: string,
  limits: DiscoveryLimits,
): Promise<{ status: number; json: unknown; cacheControl: string | null }> {
  const response = await outbound.safeFetch(url, { timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes, headers: { accept: 'application/json' } });
  let json: unknown = undefined;
  if (response.status === 200) {
    try {
      json = JSON.parse(await response.text());
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, json, cacheControl: response.headers.get('cache-control') };
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The usable public signing keys of a JWKS document; null when it is not one. */
export function signingKeysOf(document: unknown): PublicJwk[] | null {
  if (!isObject(document) || !Array.isArray(document.keys)) return null;
  const keys: PublicJwk[] = [];
  for (const candidate of document.keys) {
    // Encryption keys and keys the platform cannot use are skipped, not refused: issuers publish both.
    if (!isObject(candidate) || (candidate.use !== undefined && candidate.use !== 'sig')) continue;
    const parsed = publicJwkSchema.safeParse(candidate);
    if (parsed.success) keys.push(parsed.data);
  }
  return keys;
}

export interface KeySetLoad {
  keys: PublicJwk[];
  ttlSeconds: number;
}

/** GET jwks_uri through the guard; refusals as the contract's discovery errors (422: the issuer's answer). */
export async function loadKeySet(outbound: Outbound, jwksUri: string, limits: DiscoveryLimits): Promise<KeySetLoad> {
  let answer;
  try {
    answer = await getJson(outbound, jwksUri, limits);
  } catch (error) {
    if (error instanceof OutboundError)
      throw fail(422, error.statusCode === 400 ? discoveryErrors.jwksUriRefused : discoveryErrors.jwksUnavailable);
    throw error;
  }
  if (answer.status !== 200) throw fail(422, discoveryErrors.jwksUnavailable);
  const keys = signingKeysOf(answer.json);
  if (!keys) throw fail(422, discoveryErrors.jwksInvalid);
  if (keys.length === 0) throw fail(422, discoveryErrors.jwksNoKeys);
  return { keys, ttlSeconds: jwksTtlSeconds(answer.cacheControl) };
}

interface CachedKeySet {
  keys: PublicJwk[];
  /** performance.now() of the load, to decide whether an unknown kid is worth a reload. */
  loadedAt: number;
}

export interface IssuerKeysOptions {
  /** Number of key sets kept. */
  max?: number;
  /** Tests move the clock (milliseconds, like performance.now()). */
  clock?: () => number;
  load: (jwksUri: string) => Promise<KeySetLoad>;
}

/** Issuers' key sets, per jwks_uri, each kept for its own Cache-Control max-age (bounded). */
export class IssuerKeys {
  private readonly clock: () => number;
  private readonly sets: LRUCache<string, CachedKeySet>;
  private readonly failures: LRUCache<string, string>;

  constructor(options: IssuerKeysOptions) {
    const clock = (this.clock = options.clock ?? (() => performance.now()));
    const load = options.load;
    const perf = { now: clock };
    // lru-cache reads its clock at most once a millisecond by default; a test's clock moves by jumps.
    const ttlResolution = options.clock ? 0 : 1;
    this.sets = new LRUCache<string, CachedKeySet>({
      max: options.max ?? 1000,
      ttl: JWKS_DEFAULT_TTL_SECONDS * 1000,
      perf,
      ttlResolution,
      fetchMethod: async (jwksUri, _stale, { options: entry }) => {
        const loaded = await load(jwksUri);
        entry.ttl = loaded.ttlSeconds * 1000;
        return { keys: loaded.keys, loadedAt: clock() };
      },
    });
    this.failures = new LRUCache<string, string>({ max: options.max ?? 1000, ttl: JWKS_FAILURE_TTL_SECONDS * 1000, perf, ttlResolution });
  }

  /** What discovery just loaded: the first token needs no call. */
  prime(jwksUri: string, loaded: KeySetLoad): void {
    this.failures.delete(jwksUri);
    this.sets.set(jwksUri, { keys: loaded.keys, loadedAt: this.clock() }, { ttl: loaded.ttlSeconds * 1000 });
  }

  /**
   * The key with this kid in the issuer's set: from the cache while it is fresh; an unknown kid reloads
   * a set older than the minimum TTL (the issuer may have rotated). Throws an AppError when the set
   * cannot be loaded.
   */
  async find(jwksUri: string, kid: string): Promise<PublicJwk | null> {
    const failed = this.failures.get(jwksUri);
    if (failed) throw new AppError(422, failed);
    let set = await this.fetch(jwksUri, false);
    let key = set.keys.find((k) => k.kid === kid);
    if (!key && this.clock() - set.loadedAt >= JWKS_MIN_TTL_SECONDS * 1000) {
      set = await this.fetch(jwksUri, true);
      key = set.keys.find((k) => k.kid === kid);
    }
    return key ?? null;
  }

  /** Loads the set at jwksUri unless it is cached (a moved key set proves itself this way); throws like find. */
  async check(jwksUri: string): Promise<void> {
    const failed = this.failures.get(jwksUri);
    if (failed) throw new AppError(422, failed);
    await this.fetch(jwksUri, false);
  }

  private async fetch(jwksUri: string, forceRefresh: boolean): Promise<CachedKeySet> {
    try {
      const set = await this.sets.fetch(jwksUri, { forceRefresh });
      if (!set) throw new AppError(422, discoveryErrors.jwksUnavailable);
      return set;
    } catch (error) {
      const message = error instanceof AppError ? error.message : discoveryErrors.jwksUnavailable;
      this.failures.set(jwksUri, message);
      throw new AppError(422, message);
    }
  }

  /** Forget an issuer's set (its auth domain was removed). */
  forget(jwksUri: string): void {
    this.sets.delete(jwksUri);
    this.failures.delete(jwksUri);
  }

  clear(): void {
    this.sets.clear();
    this.failures.clear();
  }
}
