import fs from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Redis } from 'ioredis';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { trace } from '@opentelemetry/api';
import type { Config } from './config.js';
import { createDatabase, type Database, type Db } from './db/client.js';
import { AccessCache } from './lib/access-cache.js';
import { Passwords } from './lib/passwords.js';
import { SecretBox } from './lib/secret-box.js';
import { sealClearSecrets } from './lib/clear-secrets.js';
import { TokenService } from './lib/tokens.js';
import { Outbound } from './lib/outbound.js';
import { Issuers } from './lib/issuer-discovery.js';
import { ApplicationReads } from './modules/applications/applications.service.js';
import { isUnder, pathOf } from './lib/url-paths.js';
import { RequestLog, serializeRequest } from './lib/request-log.js';
import { registerAuth, registerOwnership } from './plugins/auth.js';
import { registerCors, type CorsOptions } from './plugins/cors.js';
import { registerLockUserAuth } from './plugins/lock-user-auth.js';
import { registerRateLimits } from './plugins/rate-limit.js';
import { PlatformCa } from './plugins/platform-ca.js';
import { registerErrorHandling, serializeError } from './plugins/errors.js';
import { registerTextGuard } from './plugins/text-guard.js';
import { portalCspDirectives, registerSecurityHeaders } from './plugins/security-headers.js';
import { registerMetrics } from './plugins/metrics.js';
import { accountRoutes } from './modules/account/account.routes.js';
import { accountTrustRoutes } from './modules/account/account-trust.routes.js';
import { registerAccountTrust } from './modules/account/account-trust.service.js';
import { activityRoutes } from './modules/activity/activity.routes.js';
import { accessCodesRoutes } from './modules/access-codes/access-codes.routes.js';
import { activityExportRoutes } from './modules/activity-export/activity-export.routes.js';
import { lockEventsRoutes } from './modules/locks/lock-events.routes.js';
import { simulateRoutes } from './modules/locks/simulate.routes.js';
import { findLock } from './modules/locks/locks.service.js';
import { locksRoutes } from './modules/locks/locks.routes.js';
import { getActivity } from './modules/activity/activity.service.js';
import { LiveEvents } from './plugins/live-events.js';
import { outboxRoutes } from './modules/outbox/outbox.routes.js';
import { historyRoutes } from './modules/history/history.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { webhookTestEventRoutes } from './modules/webhooks/test-event.routes.js';
import { WebhookDispatcher } from './modules/webhooks/delivery.js';
import { sharesRoutes } from './modules/shares/shares.routes.js';
import { applicationsRoutes } from './modules/applications/applications.routes.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { jwksRoutes } from './modules/keys/keys.routes.js';
import { platformUsersRoutes } from './modules/platform-users/platform-users.routes.js';
import { cdnRoutes, logosRoutes } from './modules/logos/logos.routes.js';
import { emailPreviewRoutes } from './modules/email-preview/email-preview.routes.js';
import { certificatesRoutes } from './modules/certificates/certificates.routes.js';
import { operationsRoutes } from './modules/operations/operations.routes.js';
import { devicesSdkRoutes } from './modules/devices-sdk/devices-sdk.routes.js';
import { registerDeviceBroker } from './modules/devices/device-broker.js';
import { registerDeviceRuntime } from './modules/devices/runtime/device-runtime.js';
import { registerVirtualDevices } from './modules/devices/virtual/virtual-devices.js';
import { devicesRoutes } from './modules/devices/devices.routes.js';
import { brokerAuthRoutes } from './modules/broker-auth/broker-auth.routes.js';
import { tilesRoutes } from './modules/tiles/tiles.routes.js';
import { sitesRoutes } from './modules/sites/sites.routes.js';
import { downloadsRoutes, platformSetupRoutes } from './modules/downloads/downloads.routes.js';
import { createLogoStorage } from './plugins/storage/index.js';
import { createMailer } from './plugins/mailer/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    database: Database;
    tokens: TokenService;
    passwords: Passwords;
    redis: Redis | null;
    /** Sessions, ownership and application lists, kept per instance and dropped on the database's notice. */
    accessCache: AccessCache;
    /** Issues and checks the certificates lock users sign their operations with. */
    platformCa: PlatformCa;
    /** Webhook deliveries: the outbox relay and the queue's workers (modules/webhooks/delivery.ts). */
    webhooks: WebhookDispatcher;
    /** The outbound guard every call to an owner-given URL goes through (its OUTBOUND_ALLOW hosts, its connections). */
    outbound: Outbound;
    /** Third-party issuers' key sets and OpenID configurations, read through this app's outbound guard. */
    issuers: Issuers;
    /** Prepared application reads and this instance's cache of encoded application bodies. */
    applicationReads: ApplicationReads;
    /** Every route as registered: the security suite derives its authorization matrix from it. */
    routeTable: { method: string; url: string; public: boolean }[];
    /**
     * `draining`: SIGTERM's drain has begun (server.ts) — GET /ready answers 503 so a load balancer stops
     * sending new requests, every other request is still served, each answer closing its connection.
     */
    lifecycle: { draining: boolean };
  }
  interface FastifyContextConfig {
    /** Marks a route that needs no portal access token (login, previews, health …). */
    public?: boolean;
    /** The route never changes sessions, applications or owners: its answer need not wait for the access cache. */
    accessUnchanged?: boolean;
  }
}

export interface BuildOptions {
  /** An already migrated database (tests); otherwise one is created from config and migrated. */
  database?: Database;
  logger?: boolean;
  /** Tests shorten the CORS cache so a removed domain can be seen to stop working. */
  cors?: Pick<CorsOptions, 'cacheTtlMs'>;
  /** Where the log goes instead of stdout (tests read what was logged). */
  logStream?: { write(line: string): void };
  /** Routes for the metrics port beside /metrics (main.ts: the embedded database's backup). */
  adminRoutes?: (server: FastifyInstance, app: FastifyInstance) => Promise<void> | void;
  /** Where the device package's tarball is (tests); by default apps/api/dist/downloads, from the build. */
  downloadsDir?: string;
}

/**
 * Explicit wiring: every plugin and module is registered here, in order. The infrastructure (database,
 * caches, stores, mailer, queues) is made first and decorated on the app, then HTTP is registered on it;
 * nothing lives outside the app, so two apps in one process share nothing.
 */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = createServer(config, options);
  await createInfrastructure(app, config, options);
  await registerHttp(app, config, options);
  return app;
}

function createServer(config: Config, options: BuildOptions): FastifyInstance {
  const tracing = Boolean(config.tracing.endpoint);
  const app = Fastify({
    // LOG_LEVEL=silent writes nothing, so it runs without a logger: a pino logger at level silent still
    // made a child per request and the two request log calls, about 9 % of a bare Fastify's throughput
    // (docs/performance.md).
    // `err` through serializeError: a database error is logged without its statement or parameters; `req`
    // with its URL redacted (lib/redact-url.ts), so no query value — an emailed link's secret — is logged.
    logger:
      options.logger === false || config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            serializers: { err: serializeError, req: serializeRequest },
            ...(options.logStream ? { stream: options.logStream } : {}),
            ...(tracing ? { mixin: traceIds } : {}),
          },
    // No request log lines unless ACCESS_LOG: then one per request, when it completes (lib/request-log.ts).
    logController: new RequestLog(config.accessLog),
    trustProxy: config.trustProxy,
    bodyLimit: 256 * 1024,
    // With traces on (src/tracing.ts), the request id is the trace id: logs, x-request-id and traces meet.
    genReqId: (req) =>
      (tracing && trace.getActiveSpan()?.spanContext().traceId) ||
      (typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'].slice(0, 100) : nextRequestId()),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // While the service closes, a request already sent on an open keep-alive connection (a proxy's) is
    // served, not answered 503: a proxy does not retry a POST, so a 503 there would be a failed request in
    // a rolling restart. Each such answer says Connection: close (registerHttp's onSend hook), so the
    // proxy's next request opens a connection to another instance, and the close completes.
    return503OnClosing: false,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const routeTable: FastifyInstance['routeTable'] = [];
  app.decorate('routeTable', routeTable);
  app.decorate('lifecycle', { draining: false });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routeTable.push({ method, url: route.url, public: route.config?.public === true });
    }
  });
  return app;
}

/**
 * The database, caches, stores, mailer and queues, each decorated on the app, and the one onClose that
 * stops them. The webhook dispatcher is made here and started by registerHttp, once its metrics are wired.
 */
async function createInfrastructure(app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createDatabase({ url: config.database.url, dataDir: path.join(config.dataDir, 'pgdata'), poolSize: config.database.poolSize }));
  if (ownsDatabase) await database.migrate();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : null;
  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('db', database.db);
  // The secrets platform-ca and the webhooks keep in the database are sealed with this box.
  const secretBox = new SecretBox(config.secretsEncryptionKey);
  // Without a key, a warning at every start; with one, what was stored in clear before it is sealed now.
  if (!config.secretsEncryptionKey) app.log.warn(SECRETS_UNENCRYPTED_WARNING);
  else {
    const sealed = await sealClearSecrets((text, values) => database.executeSql(text, values), secretBox);
    if (sealed > 0) app.log.info(`Sealed ${sealed} secrets stored in clear before SECRETS_ENCRYPTION_KEY was set`);
  }
  const outbound = new Outbound({ allowHosts: config.outbound.allowHosts, hints: config.outbound.hints });
  app.decorate('outbound', outbound);
  app.decorate('issuers', new Issuers(outbound));
  app.decorate('applicationReads', new ApplicationReads(database.db));
  if (config.outbound.allowHosts.length > 0)
    app.log.warn(`OUTBOUND_ALLOW lets ${config.outbound.allowHosts.join(', ')} through the outbound guard: for development and tests only`);
  app.decorate('tokens', await TokenService.create(config, database.db));
  app.decorate('passwords', new Passwords(config.argon2));
  app.decorate('redis', redis);
  // Off (ACCESS_CACHE=false) it never answers, and every request reads the session row as before.
  const accessCache = new AccessCache();
  if (config.database.accessCache) await accessCache.start(database);
  app.decorate('accessCache', accessCache);
  // The sandbox's live updates: one LISTEN per instance, fanned out to this instance's SSE clients.
  const liveEvents = new LiveEvents(database, { lock: (id) => findLock(database.db, id), activity: (id) => getActivity(database.db, id) }, app.log);
  await liveEvents.start();
  app.decorate('liveEvents', liveEvents);
  app.decorate('platformCa', await PlatformCa.load(database.db, secretBox));
  // The device CA and broker (app.deviceCa, app.deviceBus, app.mqtt); its TLS port opens only in app.mqtt.listen().
  await registerDeviceBroker(app);
  // Device presence, state, results and configs on that bus; app.deviceRelay for the operations routes.
  await registerDeviceRuntime(app);
  // Locks without a provisioned device: the same controller in-process (app.virtualDevices).
  registerVirtualDevices(app);
  app.decorate('storage', await createLogoStorage(config, database.db));
  app.decorate('mailer', createMailer(config, app.log));
  const webhookDispatcher = new WebhookDispatcher(database, config.webhooks, app.log, outbound, secretBox);
  app.decorate('webhooks', webhookDispatcher);
  app.addHook('onClose', async () => {
    app.storage.close?.();
    await app.mailer.close();
    await webhookDispatcher.stop();
    redis?.disconnect();
    app.tokens.stop();
    await accessCache.stop();
    await liveEvents.stop();
    await outbound.close();
    if (ownsDatabase) await database.close();
  });
}

/** Hooks, plugins and routes, in order, every registration awaited. */
async function registerHttp(app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
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
  // One onSend hook for these (each hook is a step of every request):
  // - The request id (the trace id with traces on) is answered as x-request-id.
  // - Graceful shutdown: requests in flight when close() starts still finish, and their keep-alive
  //   connections are told to close, so server.close() is not left waiting on idle sockets. During
  //   SIGTERM's drain (app.lifecycle.draining) too: a proxy's kept-alive connection is not reused for
  //   requests after it, and the proxy's next connection goes where its balancing now sends it.
  // - Read your writes: a request that may have changed something answers only once this instance's
  //   access cache has applied every change committed so far (one NOTIFY round trip; lib/access-cache.ts).
  //   Not after a 5xx: the database is likely what failed, and the answer should not wait on it again.
  let closeStarted = false;
  app.addHook('preClose', async () => {
    closeStarted = true;
  });
  const { lifecycle } = app;
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

  await app.register(
    async (api) => {
      await api.register(healthRoutes);
      await api.register(authRoutes, { prefix: '/auth' });
      await api.register(certificatesRoutes);
      await api.register(operationsRoutes);
      await api.register(devicesSdkRoutes);
      await api.register(devicesRoutes);
      await api.register(brokerAuthRoutes);
      await api.register(accountRoutes);
      await api.register(accountTrustRoutes);
      await api.register(applicationsRoutes);
      await api.register(platformUsersRoutes);
      await api.register(logosRoutes);
      await api.register(emailPreviewRoutes);
      await api.register(locksRoutes);
      await api.register(lockEventsRoutes);
      await api.register(accessCodesRoutes);
      await api.register(simulateRoutes);
      await api.register(activityRoutes);
      await api.register(activityExportRoutes);
      await api.register(sharesRoutes);
      await api.register(outboxRoutes);
      await api.register(historyRoutes);
      await api.register(webhooksRoutes);
      await api.register(tilesRoutes);
      await api.register(sitesRoutes);
      await api.register(webhookTestEventRoutes);
      await api.register(platformSetupRoutes, { dir: options.downloadsDir });
    },
    { prefix: config.apiPrefix },
  );
  await app.register(cdnRoutes);
  await app.register(jwksRoutes);
  await app.register(downloadsRoutes, { dir: options.downloadsDir });

  await registerSpa(app, config);
}

export const SECRETS_UNENCRYPTED_WARNING =
  'SECRETS_ENCRYPTION_KEY is not set: the token signing keys, the CA private keys, the webhook secrets and the other server secrets in the database are stored unencrypted, and `npm run backup` refuses to copy them unless given --allow-clear-secrets. Set it (32+ characters) to encrypt them at rest: the next start seals those already stored.';

/**
 * Log ids for requests that bring no X-Request-Id: this process's random prefix and a counter. Unique
 * across instances like a UUID, without drawing random bytes for every request.
 */
const requestIdPrefix = crypto.randomUUID().slice(0, 18);
let requestCounter = 0;
function nextRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${requestIdPrefix}${requestCounter.toString(36)}`;
}

/** With traces on, every log line names the trace and span it was written in (pino's mixin). */
function traceIds(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context ? { traceId: context.traceId, spanId: context.spanId } : {};
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
async function registerSpa(app: FastifyInstance, config: Config): Promise<void> {
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
