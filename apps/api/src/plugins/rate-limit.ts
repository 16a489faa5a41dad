import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { apiErrors } from '@latchkey/contract';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { AccessCache } from '../lib/access-cache.js';
import { bearerToken } from './auth.js';
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
 *   a new one is verified here, once, and app.authenticate then finds it in that cache;
 * - `au:<application>:<user>` for an application-signed token in the access cache (lock-user-auth);
 * - `ip:<address>` for everything else: no token, a bad or expired one, a refresh token, and an
 *   application-signed token's first request on this instance (verifying it needs the database).
 * So a busy office behind one NAT address shares only the budget of its anonymous requests, and a flood
 * of made-up tokens is still one address's flood.
 */
export async function principalKey(app: FastifyInstance, cache: AccessCache, request: FastifyRequest): Promise<string> {
  const token = bearerToken(request);
  if (token) {
    const known = app.tokens.verifiedAccess(token);
    if (known) return `u:${known.sub}`;
    const applicationUser = cachedApplicationUser(cache, token);
    if (applicationUser) return `au:${applicationUser.applicationId}:${applicationUser.id}`;
    // Only what claims to be ours is verified here (an application's token needs its keys from the database).
    if (unverifiedIssuer(token) === app.config.jwt.issuer) {
      const verified = await app.tokens.verifyAccess(token).catch(() => null);
      if (verified) return `u:${verified.sub}`;
    }
  }
  return `ip:${request.ip}`;
}

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
    ...(redis ? { redis, nameSpace: 'latchkey-rl-' } : {}),
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_req, context) => new AppError(429, apiErrors.tooManyAttempts, { 'retry-after': String(Math.ceil(context.ttl / 1000)) }),
  });

  const perPrincipal = app.createRateLimit({
    keyGenerator: (request) => principalKey(app, cache, request),
    max: (_request, key) => (key.startsWith('ip:') ? anonymousMax : max),
    // The portal's own files, served logos and the health probes are cheap reads that one page load or
    // a load balancer makes many of; counting them locked real users (and the readiness probe) out.
    allowList: (request) => exempt(request),
  });
  app.addHook('onRequest', async (request) => refuseIfExceeded(await perPrincipal(request)));

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
  throw new AppError(429, apiErrors.tooManyAttempts, {
    'retry-after': String(Math.max(1, result.ttlInSeconds)),
    'x-ratelimit-limit': String(result.max),
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(Math.max(1, result.ttlInSeconds)),
  });
}
