import type { FastifyInstance, FastifyRequest, HookHandlerDoneFunction, preHandlerAsyncHookHandler } from 'fastify';
import rateLimit, { type FastifyRateLimitStore as CounterStore } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { Redis } from 'ioredis';
import { apiErrors } from '@latchkey/contract';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { AccessCache } from '../lib/access-cache.js';
import { bearerToken, knownAccessClaims } from './auth.js';
import { cachedApplicationUser, unverifiedIssuer } from './lock-user-auth.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** `preHandler` of the directory look-ups: DIRECTORY_RATE_LIMIT_MAX per signed-in user and window. */
    limitDirectoryLookups: preHandlerAsyncHookHandler;
    /**
     * Charges one refused signed operation to its caller before it is logged: REFUSED_OPERATION_RATE_LIMIT_MAX
     * per lock user and window, five times that per address; beyond either, a 429 and nothing is written.
     */
    chargeRefusedOperation(request: FastifyRequest): Promise<void>;
  }
}

type LimitResult = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;

/**
 * Who a request is counted against, without a database query and without verifying anything twice:
 * - `u:<user>` for a valid portal access token. A token verified before is found in TokenService's cache;
 *   a new one is verified here, once, and app.authenticate then takes its claims from the request;
 * - `au:<application>:<user>` for an application-signed token in the access cache (lock-user-auth);
 * - `ip:<address>` for everything else: no token, a bad or expired one, a refresh token, and an
 *   application-signed token's first request on this instance (verifying it needs the database).
 * So a busy office behind one NAT address shares only the budget of its anonymous requests, and a flood
 * of made-up tokens is still one address's flood.
 */
export async function principalKey(app: FastifyInstance, cache: AccessCache, request: FastifyRequest): Promise<string> {
  const known = knownPrincipalKey(app, cache, request);
  if (known !== undefined) return known;
  const verified = await app.tokens.verifyAccess(bearerToken(request) ?? '').catch(() => null);
  if (!verified) return `ip:${request.ip}`;
  request.knownClaims = verified;
  return `u:${verified.sub}`;
}

/** principalKey when it needs no verification; undefined when a token that claims to be ours is new here. */
function knownPrincipalKey(app: FastifyInstance, cache: AccessCache, request: FastifyRequest): string | undefined {
  const token = bearerToken(request);
  if (token) {
    const known = knownAccessClaims(app.tokens, request);
    if (known) return `u:${known.sub}`;
    const applicationUser = cachedApplicationUser(cache, token);
    if (applicationUser) return `au:${applicationUser.applicationId}:${applicationUser.id}`;
    // Only what claims to be ours is verified here (an application's token needs its keys from the database).
    if (unverifiedIssuer(token) === app.config.jwt.issuer) return undefined;
  }
  return `ip:${request.ip}`;
}

/** The key prefix of @fastify/rate-limit's counters in Redis. */
const REDIS_NAMESPACE = 'latchkey-rl-';
/**
 * The per-principal counters' prefix in Redis: the one the plugin gives a limiter made with createRateLimit
 * (its namespace, then a route, which such a limiter has none of). Kept, so that during a rolling restart
 * instances of earlier builds and of this one count a user's requests together.
 */
const PER_PRINCIPAL_REDIS_PREFIX = `${REDIS_NAMESPACE}undefinedundefined-`;

/**
 * Rate limits (README "Rate limits"): every API request counts once, per principal (principalKey) —
 * RATE_LIMIT_MAX per user, ANONYMOUS_RATE_LIMIT_MAX per address; login keeps its own per IP + email
 * limit (auth.routes.ts) and directory look-ups one per user. Counters live in Redis when configured, so
 * all instances share them. A 429 carries Retry-After and the X-RateLimit-* headers; other answers none.
 */
export async function registerRateLimits(
  app: FastifyInstance,
  options: { config: Config; redis: Redis | null; cache: AccessCache; exempt: (request: FastifyRequest) => boolean },
) {
  const { config, redis, cache, exempt } = options;
  const { max, windowSeconds, anonymousMax, directoryMax, refusedMax } = config.rateLimit;
  await app.register(rateLimit, {
    // No limiter is added to routes by itself: the one hook below counts every request once, and routes
    // with their own `config.rateLimit` (login) get theirs on top.
    global: false,
    max,
    timeWindow: windowSeconds * 1000,
    ...(redis ? { redis, nameSpace: REDIS_NAMESPACE } : {}),
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_req, context) => new AppError(429, apiErrors.tooManyAttempts, { 'retry-after': String(Math.ceil(context.ttl / 1000)) }),
  });

  // Every request counts once, against its principal, in the plugin's stores (a fixed window per key, in
  // memory or in Redis) but without its createRateLimit, which awaits five times a request: this hook is
  // callback-style, so a request whose token this instance verified before is counted in the same tick,
  // and with the in-memory store passes the limiter without a promise.
  const perPrincipal: CounterStore = redis ? new RedisStore(false, false, redis, PER_PRINCIPAL_REDIS_PREFIX) : new LocalStore(false, false);
  const windowMs = windowSeconds * 1000;
  const charge = (key: string, done: HookHandlerDoneFunction): void => {
    const limit = key.startsWith('ip:') ? anonymousMax : max;
    perPrincipal.incr(
      key,
      // A count that cannot be had (Redis unreachable) lets the request through, as skipOnError does.
      (error, counted) => done(error || !counted || counted.current <= limit ? undefined : tooManyRequests(limit, Math.ceil(counted.ttl / 1000))),
      windowMs,
      limit,
    );
  };
  app.addHook('onRequest', (request, _reply, done) => {
    // The portal's own files, served logos and the health probes are cheap reads that one page load or
    // a load balancer makes many of; counting them locked real users (and the readiness probe) out.
    if (exempt(request)) return done();
    const key = knownPrincipalKey(app, cache, request);
    if (key !== undefined) return charge(key, done);
    principalKey(app, cache, request).then((verified) => charge(verified, done), done);
  });

  const directory = app.createRateLimit({ keyGenerator: (request) => `dir:${request.user.id}`, max: directoryMax });
  app.decorate('limitDirectoryLookups', async function (request: FastifyRequest) {
    refuseIfExceeded(await directory(request));
  });

  // A refused operation writes a log entry and may owe a webhook delivery: it costs more than a request,
  // so it has a budget of its own, far tighter, per lock user (whichever application it belongs to) and
  // per address (many made-up users behind one address). Counted only when an operation is refused.
  const refusedPerUser = app.createRateLimit({ keyGenerator: (request) => `refused:u:${request.lockUser.id}`, max: refusedMax });
  const refusedPerAddress = app.createRateLimit({ keyGenerator: (request) => `refused:ip:${request.ip}`, max: 5 * refusedMax });
  app.decorate('chargeRefusedOperation', async function (request: FastifyRequest) {
    refuseIfExceeded(await refusedPerUser(request));
    refuseIfExceeded(await refusedPerAddress(request));
  });
}

export function refuseIfExceeded(result: LimitResult): void {
  if (result.isAllowed || !result.isExceeded) return;
  throw tooManyRequests(result.max, result.ttlInSeconds);
}

/** The 429 of a limit of `max` whose window ends in `ttlInSeconds`. */
function tooManyRequests(max: number, ttlInSeconds: number): AppError {
  return new AppError(429, apiErrors.tooManyAttempts, {
    'retry-after': String(Math.max(1, ttlInSeconds)),
    'x-ratelimit-limit': String(max),
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(Math.max(1, ttlInSeconds)),
  });
}
