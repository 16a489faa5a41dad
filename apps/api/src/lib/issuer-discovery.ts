import { LRUCache } from 'lru-cache';
import { normaliseIssuerUrl, discoveryErrors, outboundErrors } from '@latchkey/contract';
import { AppError } from '../errors.js';
import {
  fail,
  getJson,
  isObject,
  IssuerKeys,
  JWKS_FAILURE_TTL_SECONDS,
  JWKS_MAX_TTL_SECONDS,
  jwksTtlSeconds,
  loadKeySet,
  DEFAULT_DISCOVERY_LIMITS,
  type DiscoveryLimits,
  type KeySetLoad,
} from './issuer-keys.js';
import { OutboundError, type Outbound } from './outbound.js';

/**
 * An auth domain added with discovery follows its issuer. The OpenID configuration is checked
 * when the owner adds the domain (a refusal is a 4xx and nothing is stored) and read again, through the
 * same guard, whenever it expires by its own Cache-Control (bounded like a key set's), so an issuer that
 * moves its `jwks_uri` keeps working without the owner touching anything. A configuration that stops
 * passing does not stop verification: the last good `jwks_uri` is used until that read is
 * JWKS_MAX_TTL_SECONDS old. The cache is per instance and writes nothing to the database: the stored
 * `jwks_uri` stays the one checked when the domain was added.
 */

export interface ConfigLoad {
  jwksUri: string;
  ttlSeconds: number;
}

/**
 * `{issuer}/.well-known/openid-configuration` through the guard, checked (OpenID Connect Discovery 1.0,
 * section 4): it answers 200 with a JSON object, its `issuer` is the auth domain in the RFC 3986 normal
 * form (`normaliseIssuerUrl`; tokens' `iss` is compared the same way) and it names a `jwks_uri`.
 */
export async function loadIssuerConfig(outbound: Outbound, issuer: string, limits: DiscoveryLimits): Promise<ConfigLoad> {
  const configUrl = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let answer;
  try {
    answer = await getJson(outbound, configUrl, limits);
  } catch (error) {
    // The URL the owner typed: the guard's own reason says what is wrong with it.
    if (error instanceof OutboundError) throw fail(error.statusCode === 400 ? 400 : 422, outboundErrors[error.reason]);
    throw error;
  }
  if (answer.status !== 200) throw fail(422, discoveryErrors.configNotFound);
  const config = answer.json;
  if (!isObject(config)) throw fail(422, discoveryErrors.configNotJson);
  if (typeof config.issuer !== 'string' || normaliseIssuerUrl(config.issuer) !== normaliseIssuerUrl(issuer)) throw fail(422, discoveryErrors.issuerMismatch);
  const jwksUri = config.jwks_uri;
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) throw fail(422, discoveryErrors.jwksUriMissing);
  return { jwksUri, ttlSeconds: jwksTtlSeconds(answer.cacheControl) };
}

/** What POST …/auth/issuer with `discovery: true` checks before anything is stored: the configuration, then a usable key set. */
export async function discoverIssuer(outbound: Outbound, issuer: string, limits: DiscoveryLimits): Promise<{ config: ConfigLoad; keySet: KeySetLoad }> {
  const config = await loadIssuerConfig(outbound, issuer, limits);
  return { config, keySet: await loadKeySet(outbound, config.jwksUri, limits) };
}

/** Where the warnings go: the request's logger (pino), or nothing. */
export interface DiscoveryLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** The key set to look a kid up in; `problem` is set when it is the last good one because the configuration cannot be used now. */
export interface JwksUriResolution {
  jwksUri: string;
  problem: string | null;
}

interface Entry {
  /** The last configuration read that passed, and when (clock milliseconds). */
  good: { jwksUri: string; at: number };
  /** No new read before this: the configuration's max-age after a good read, the failure TTL after a failed one. */
  until: number;
  /** Why the last read failed; null when it passed. */
  problem: string | null;
  /** The read under way; concurrent lookups share it. */
  reading?: Promise<void>;
}

export interface IssuerConfigsOptions {
  max?: number;
  clock?: () => number;
  load: (issuer: string) => Promise<ConfigLoad>;
}

/** Auth domains' OpenID configurations, per issuer: the `jwks_uri` to use and until when. */
export class IssuerConfigs {
  private readonly clock: () => number;
  private readonly load: (issuer: string) => Promise<ConfigLoad>;
  private readonly entries: LRUCache<string, Entry>;

  constructor(
    private readonly keys: IssuerKeys,
    options: IssuerConfigsOptions,
  ) {
    this.clock = options.clock ?? (() => performance.now());
    this.load = options.load;
    this.entries = new LRUCache<string, Entry>({ max: options.max ?? 1000 });
  }

  /** What discovery just read: the first token needs no call. */
  prime(issuer: string, config: ConfigLoad): void {
    const now = this.clock();
    this.entries.set(issuer, { good: { jwksUri: config.jwksUri, at: now }, until: now + config.ttlSeconds * 1000, problem: null });
  }

  /**
   * The issuer's `jwks_uri` now. `stored` is the database's: the one checked when the domain was added,
   * and when — an instance that has not read the configuration yet counts that check as its last good read.
   * Throws an AppError (422) when the configuration cannot be used and the last good read is too old.
   */
  async jwksUriFor(issuer: string, stored: { jwksUri: string; checkedAt: Date }, log?: DiscoveryLog): Promise<JwksUriResolution> {
    let entry = this.entries.get(issuer);
    if (!entry) {
      const age = Math.max(0, Date.now() - stored.checkedAt.getTime());
      entry = { good: { jwksUri: stored.jwksUri, at: this.clock() - age }, until: 0, problem: null };
      this.entries.set(issuer, entry);
    }
    if (this.clock() >= entry.until) {
      const current = entry;
      current.reading ??= this.read(issuer, current, log).finally(() => (current.reading = undefined));
      await current.reading;
    }
    if (entry.problem === null) return { jwksUri: entry.good.jwksUri, problem: null };
    if (this.clock() - entry.good.at < JWKS_MAX_TTL_SECONDS * 1000) return { jwksUri: entry.good.jwksUri, problem: entry.problem };
    throw new AppError(422, `${discoveryErrors.configExpired}: ${entry.problem}`);
  }

  private async read(issuer: string, entry: Entry, log: DiscoveryLog | undefined): Promise<void> {
    try {
      const config = await this.load(issuer);
      // A moved key set must load (through the guard, with a usable key) before it replaces the last good one.
      if (config.jwksUri !== entry.good.jwksUri) {
        await this.keys.check(config.jwksUri);
        log?.info({ issuer, from: entry.good.jwksUri, to: config.jwksUri }, 'issuer moved its jwks_uri');
      }
      const now = this.clock();
      entry.good = { jwksUri: config.jwksUri, at: now };
      entry.until = now + config.ttlSeconds * 1000;
      entry.problem = null;
    } catch (error) {
      entry.problem = error instanceof AppError ? error.message : discoveryErrors.configUnavailable;
      entry.until = this.clock() + JWKS_FAILURE_TTL_SECONDS * 1000;
      const keptUntil = Math.max(0, entry.good.at + JWKS_MAX_TTL_SECONDS * 1000 - this.clock());
      log?.warn(
        { issuer, jwksUri: entry.good.jwksUri, problem: entry.problem, keptForSeconds: Math.floor(keptUntil / 1000), ...(error instanceof AppError ? {} : { err: error }) },
        'OpenID configuration unusable; the last good jwks_uri is kept',
      );
    }
  }

  /** Forget an issuer (its auth domain was removed), its current key set included. */
  forget(issuer: string): void {
    const entry = this.entries.get(issuer);
    if (entry) this.keys.forget(entry.good.jwksUri);
    this.entries.delete(issuer);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * One app's issuer caches (app.issuers): key sets and OpenID configurations, read through the app's
 * outbound guard. Token verification and discovery share them; another app in the process has its own.
 */
export class Issuers {
  /** The caches' clock (milliseconds, monotonic). Tests move it forward (skewMs) instead of waiting. */
  readonly clock = { skewMs: 0, now: (): number => performance.now() + this.clock.skewMs };
  /** This app's size and time limits for discovery documents; tests shorten them. */
  readonly limits: DiscoveryLimits = { ...DEFAULT_DISCOVERY_LIMITS };
  readonly keys: IssuerKeys;
  readonly configs: IssuerConfigs;

  constructor(private readonly outbound: Outbound) {
    const now = () => this.clock.now();
    this.keys = new IssuerKeys({ clock: now, load: (jwksUri) => loadKeySet(outbound, jwksUri, this.limits) });
    this.configs = new IssuerConfigs(this.keys, { clock: now, load: (issuer) => loadIssuerConfig(outbound, issuer, this.limits) });
  }

  /** Reads the issuer's configuration and key set now (an auth domain being added with discovery). */
  discover(issuer: string): Promise<{ config: ConfigLoad; keySet: KeySetLoad }> {
    return discoverIssuer(this.outbound, issuer, this.limits);
  }

  /** Empties both caches and resets the clock. */
  clear(): void {
    this.keys.clear();
    this.configs.clear();
    this.clock.skewMs = 0;
  }
}
