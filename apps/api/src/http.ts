import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { BuildOptions } from './app.js';
import type { Config } from './config.js';
import { isUnder, pathOf } from './lib/url-paths.js';
import { registerAuth, registerOwnership } from './plugins/auth.js';
import { registerCors } from './plugins/cors.js';
import { registerLockUserAuth } from './plugins/lock-user-auth.js';
import { registerRateLimits } from './plugins/rate-limit.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerTextGuard } from './plugins/text-guard.js';
import { portalCspDirectives, registerSecurityHeaders } from './plugins/security-headers.js';
import { registerMetrics } from './plugins/metrics.js';
import { registerAccountTrust } from './modules/account/account-trust.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks a route that needs no portal access token (login, previews, health …). */
    public?: boolean;
    /** The route never changes sessions, applications or owners: its answer need not wait for the access cache. */
    accessUnchanged?: boolean;
  }
}

/**
 * The HTTP layer before the modules' routes, in order, every registration awaited: metrics, the start of
 * the webhook dispatcher, the reply hook, error handling, the text guard, auth, security headers, CORS,
 * rate limits, account trust, and OpenAPI with its UI.
 */
export async function registerHttp(app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
  const { database, accessCache, liveEvents, redis } = app;
  // Metrics before any route, so its onRoute hook sees them all (plugins/metrics.ts).
  const metrics = registerMetrics(app, {
    apiPrefix: config.apiPrefix,
    database,
    token: config.metrics.token,
    port: config.metrics.port,
    host: config.metrics.host,
    sseClients: () => liveEvents.size,
    adminRoutes: options.adminRoutes,
  });
  app.webhooks.onAttempt = (outcome) => metrics.webhookDeliveries.inc({ outcome });
  await app.webhooks.start();
  registerReplyHook(app);

  registerErrorHandling(app, config.apiPrefix);
  registerTextGuard(app);
  registerAuth(app, database.db, app.tokens, accessCache);
  registerOwnership(app, database.db);
  registerLockUserAuth(app, accessCache);

  registerSecurityHeaders(app, {
    apiPrefix: config.apiPrefix,
    contentSecurityPolicy: {
      directives: portalCspDirectives({ publicUrl: config.publicUrl, cdnBaseUrl: config.storage.cdnBaseUrl, uploadBaseUrl: app.storage.uploadBaseUrl }),
    },
    crossOriginEmbedderPolicy: false,
  });
  // After helmet, so preflight answers carry the same security headers; its hook is app-wide and so runs
  // before the route-level rate limit, and a 429 still carries the CORS headers the caller needs to read it.
  registerCors(app, database.db, { apiPrefix: config.apiPrefix, publicUrl: config.publicUrl, ...options.cors });
  await registerRateLimits(app, {
    config,
    redis,
    cache: accessCache,
    exempt: (request) => isExemptFromRateLimit(request.method, request.url, config.apiPrefix),
  });
  await registerAccountTrust(app);
  await app.register(swagger, {
    openapi: {
      info: { title: 'Latchkey platform API', version: '1.0.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: `${config.apiPrefix}/docs` });
}

/**
 * One onSend hook for these (each hook is a step of every request):
 * - The request id (the trace id with traces on) is answered as x-request-id.
 * - Graceful shutdown: requests in flight when close() starts still finish, and their keep-alive
 *   connections are told to close, so server.close() is not left waiting on idle sockets. During
 *   SIGTERM's drain (app.lifecycle.draining) too: a proxy's kept-alive connection is not reused for
 *   requests after it, and the proxy's next connection goes where its balancing now sends it.
 * - Read your writes: a request that may have changed something answers only once this instance's
 *   access cache has applied every change committed so far (one NOTIFY round trip; lib/access-cache.ts).
 *   Not after a 5xx: the database is likely what failed, and the answer should not wait on it again.
 */
function registerReplyHook(app: FastifyInstance): void {
  let closeStarted = false;
  app.addHook('preClose', async () => {
    closeStarted = true;
  });
  const { accessCache, lifecycle } = app;
  const closing = () => closeStarted || lifecycle.draining;
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    const reads = request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS';
    if (reads || reply.statusCode >= 500 || request.routeOptions.config.accessUnchanged) {
      if (closing()) reply.header('connection', 'close');
      return done(null, payload);
    }
    // Whether to close is decided when the answer goes out, after the wait: close() may have started
    // meanwhile, and a kept-alive socket would then hold server.close() until the client drops it.
    void accessCache.sync().then(() => {
      if (closing()) reply.header('connection', 'close');
      done(null, payload);
    });
  });
}

const probePaths = ['/health', '/ready', '/config'];

/** GETs outside the API (portal files, /cdn logos) and the health probes are not rate limited. */
function isExemptFromRateLimit(method: string, url: string, apiPrefix: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const path = pathOf(url);
  if (!isUnder(path, apiPrefix)) return true;
  return probePaths.includes(path.slice(apiPrefix.length));
}

/** Serves the built portal (apps/web/dist) on the same origin, with index.html for client routes. */
export async function registerSpa(app: FastifyInstance, config: Config): Promise<void> {
  const dist = config.webDistDir ?? findWebDist();
  if (!dist || !fs.existsSync(path.join(dist, 'index.html'))) return;
  const indexHtml = fs.readFileSync(path.join(dist, 'index.html'));
  await app.register(fastifyStatic, {
    root: dist,
    wildcard: false,
    index: false,
    // The build writes .br and .gz beside each asset (apps/web/vite.config.ts); they go to browsers that
    // accept them, with no compression per request.
    preCompressed: true,
    setHeaders: (res, file) => {
      res.header('Cache-Control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.decorate('serveSpa', (reply: FastifyReply) =>
    reply.type('text/html').header('Cache-Control', 'no-cache').send(indexHtml),
  );
}

function findWebDist(): string | undefined {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'apps', 'web', 'dist');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}
