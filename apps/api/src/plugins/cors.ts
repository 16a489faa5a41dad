import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { apiErrors, normaliseOrigin } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { applicationCorsDomains } from '../db/schema.js';
import { AppError } from '../errors.js';
import { isUnder, pathOf } from '../lib/url-paths.js';
import type { LockUser } from './lock-user-auth.js';

/** How long one origin's answer (allowed or not) is reused before the database is asked again. */
export const CORS_CACHE_TTL_MS = 5_000;
/** Distinct origins remembered at once; beyond it the oldest answer is dropped (random Origin floods). */
const CORS_CACHE_MAX_ENTRIES = 1_000;
const PREFLIGHT_MAX_AGE_SECONDS = 600;
/** Origins are short; anything longer is not one anybody registered, so it never reaches the database. */
const MAX_ORIGIN_LENGTH = 300;

export interface CorsOptions {
  apiPrefix: string;
  /** The portal's own URL: requests from its origin are same-origin and get no CORS headers. */
  publicUrl: string;
  /** Defaults to CORS_CACHE_TTL_MS; 0 asks the database on every request. */
  cacheTtlMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A call of an SDK route from a registered origin other than the portal's: that origin, normalised. */
    sdkCrossOrigin: string | undefined;
  }
}

/**
 * A partner's web app, on an origin one of the applications registered as a CORS domain, calls the API
 * from the browser with a token its own backend signed. Two sets of routes take part:
 * - the platform routes (GET /platform/auth …), for any registered origin;
 * - the SDK's routes: every route that takes an application user's token (`authenticateLockUser`: the
 *   certificate, /device/…, /share/…, /directory/…, /tile/…, /site/…, access codes), except the portal's
 *   own GET /account. A preflight carries no token, so it is answered for any registered origin, as on
 *   /platform; the call from a registered origin then runs only for an application user whose application
 *   lists it (403 before the route otherwise: a portal token, another application's user).
 * The portal's own auth and account routes, the portal and /cdn stay same-origin. Tokens travel as bearer
 * headers, never cookies, so no Allow-Credentials.
 *
 * Registered origin: `Access-Control-Allow-Origin: <origin>` on every answer, errors included (the
 * partner's code can read a 401's message), and a preflight is answered 204 here, before routing, auth
 * and rate limits; it adds no route, so the route table the security suite walks is unchanged.
 * Any other cross-origin caller: no CORS headers; its preflight gets 403 `{ code, message }`.
 */
export function registerCors(app: FastifyInstance, db: Db, options: CorsOptions) {
  const ownOrigin = normaliseOrigin(options.publicUrl);
  const scope = `${options.apiPrefix}/platform`;
  const accountRoute = `${options.apiPrefix}/account`;
  const cache = { ttlMs: options.cacheTtlMs ?? CORS_CACHE_TTL_MS, maxEntries: CORS_CACHE_MAX_ENTRIES };
  const isRegistered = cachedLookup(async (origin: string) => {
    // application_cors_domains_origin_idx: one index probe, whichever application registered it.
    const rows = await db.select({ origin: applicationCorsDomains.origin }).from(applicationCorsDomains).where(eq(applicationCorsDomains.origin, origin)).limit(1);
    return rows.length > 0;
  }, cache);
  const isRegisteredBy = cachedLookup(async (key: string) => {
    const [applicationId, origin] = key.split(' ') as [string, string];
    // The primary key (application_id, origin): one index probe.
    const rows = await db
      .select({ origin: applicationCorsDomains.origin })
      .from(applicationCorsDomains)
      .where(and(eq(applicationCorsDomains.applicationId, applicationId), eq(applicationCorsDomains.origin, origin)))
      .limit(1);
    return rows.length > 0;
  }, cache);

  // The SDK's routes, as `METHOD /url` of the route table, and as patterns for a preflight, which no route answers.
  const sdkRoutes = new Set<string>();
  const sdkPatterns: { method: string; path: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url === accountRoute || ![route.onRequest].flat().includes(app.authenticateLockUser)) return;
    for (const method of [route.method].flat()) {
      sdkRoutes.add(`${method} ${route.url}`);
      sdkPatterns.push({ method, path: routePattern(route.url) });
    }
  });
  app.decorateRequest('sdkCrossOrigin', undefined);
  const isPreflight = (request: FastifyRequest) => request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
  const isSdkRoute = (request: FastifyRequest, path: string) => {
    if (!isPreflight(request)) return sdkRoutes.has(`${request.method} ${request.routeOptions.url}`);
    const method = String(request.headers['access-control-request-method']).toUpperCase();
    return sdkPatterns.some((route) => route.method === method && route.path.test(path));
  };

  // Requests without an Origin (most of them), outside both sets, or from the portal itself pass in the
  // same tick; the others take the async path.
  app.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.origin;
    if (!header) return done();
    const path = pathOf(request.url);
    const sdk = !isUnder(path, scope) && isSdkRoute(request, path);
    if (!sdk && !isUnder(path, scope)) return done();
    const origin = parseOrigin(header);
    if (origin === ownOrigin) return done();
    answerCrossOrigin(request, reply, origin, sdk).then(() => {
      if (!reply.sent) done();
    }, done);
  });

  // After authentication, before the route: an SDK call from another origin runs only for an application
  // user whose application lists that origin.
  app.addHook('preValidation', (request, _reply, done) => {
    const origin = request.sdkCrossOrigin;
    if (origin === undefined) return done();
    const user = request.lockUser as LockUser | null;
    if (user?.kind !== 'application' || !user.applicationId) return done(new AppError(403, apiErrors.corsOriginNotOfApplication));
    isRegisteredBy(`${user.applicationId} ${origin}`).then(
      (listed) => done(listed ? undefined : new AppError(403, apiErrors.corsOriginNotOfApplication)),
      (err: unknown) => done(err as Error),
    );
  });

  async function answerCrossOrigin(request: FastifyRequest, reply: FastifyReply, origin: string | null, sdk: boolean): Promise<void> {
    const preflight = isPreflight(request);
    // The answer depends on Origin from here on: shared caches must keep callers apart.
    reply.header('vary', 'Origin');
    const allowed = origin !== null && (await isRegistered(origin));
    if (!allowed) {
      if (preflight) throw new AppError(403, apiErrors.corsOriginNotAllowed);
      return;
    }
    // A browser sends a call with a token only after a preflight, and that passes for any registered origin:
    // which application registered it is checked once the token is known.
    if (sdk && !preflight) request.sdkCrossOrigin = origin;
    reply.header('access-control-allow-origin', origin);
    // Let the partner's script read when to retry after a 429, where a created resource lives, and the
    // next page of a paged list (the webhook delivery log's `Link: <…>; rel="next"`).
    if (!preflight) return void reply.header('access-control-expose-headers', 'retry-after, location, link');
    reply
      .code(204)
      .headers({
        'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE',
        'access-control-allow-headers': 'authorization, content-type, accept',
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      })
      .send();
  }
}

/** A route's URL as a pattern for request paths: each `:param` one segment, a `*` the rest. */
function routePattern(url: string): RegExp {
  const escaped = url.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${escaped.join('/')}/?$`);
}

/**
 * The origin as stored (contract normaliser: lower-case host, default port dropped, no path), or null
 * for what can never be registered: `null`, garbage, anything but https.
 */
function parseOrigin(value: string): string | null {
  if (value.length > MAX_ORIGIN_LENGTH) return null;
  try {
    const origin = normaliseOrigin(value);
    return origin.startsWith('https://') ? origin : null;
  } catch {
    return null;
  }
}

export interface CacheOptions {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * Remembers each key's answer for `ttlMs`, so a removed CORS domain stops working within that time on
 * every instance without any cross-instance signal. Concurrent misses share one lookup; a failed lookup
 * is not remembered. With a fixed TTL, insertion order is expiry order, so the first key is the oldest.
 */
export function cachedLookup<T>(lookup: (key: string) => Promise<T>, { ttlMs, maxEntries, now = Date.now }: CacheOptions) {
  const entries = new Map<string, { expires: number; value: Promise<T> }>();
  return (key: string): Promise<T> => {
    const at = now();
    const hit = entries.get(key);
    if (hit && hit.expires > at) return hit.value;
    entries.delete(key);
    const value = lookup(key);
    if (ttlMs <= 0) return value;
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    const entry = { expires: at + ttlMs, value };
    entries.set(key, entry);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  };
}
