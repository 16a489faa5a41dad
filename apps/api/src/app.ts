import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { trace } from '@opentelemetry/api';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { RequestLog, lazyChildLogger, serializeRequest } from './lib/request-log.js';
import type { CorsOptions } from './plugins/cors.js';
import { serializeError } from './plugins/errors.js';
import { createInfrastructure } from './infrastructure.js';
import { registerHttp, registerSpa } from './http.js';
import { registerModules } from './modules.js';

export { SECRETS_UNENCRYPTED_WARNING } from './infrastructure.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered: the security suite derives its authorization matrix from it. */
    routeTable: { method: string; url: string; public: boolean }[];
    /**
     * `draining`: SIGTERM's drain has begun (server.ts) — GET /ready answers 503 so a load balancer stops
     * sending new requests, every other request is still served, each answer closing its connection.
     */
    lifecycle: { draining: boolean };
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
 * Explicit wiring, in order: the Fastify instance; the infrastructure (database, caches, stores, mailer,
 * queues) decorated on it (infrastructure.ts); the HTTP layer — hooks, plugins, error handling, security
 * headers, CORS, rate limits, OpenAPI (http.ts); the modules' routes (modules.ts); last the portal's files.
 * Nothing lives outside the app, so two apps in one process share nothing.
 */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = createServer(config, options);
  await createInfrastructure(app, config, options);
  await registerHttp(app, config, options);
  await registerModules(app, config, options);
  await registerSpa(app, config);
  return app;
}

function createServer(config: Config, options: BuildOptions): FastifyInstance {
  const tracing = Boolean(config.tracing.endpoint);
  const nextRequestId = requestIds();
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
    // Each request's logger is made when something logs with it: at the default level a request that goes
    // well logs nothing, and making a child up front was about a sixth of a read's CPU time.
    childLoggerFactory: lazyChildLogger,
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
 * Log ids for requests that bring no X-Request-Id: the app's own random prefix and counter. Unique across
 * instances and across the apps of one process like a UUID, without drawing random bytes for every request.
 */
function requestIds(): () => string {
  const prefix = crypto.randomUUID().slice(0, 18);
  let counter = 0;
  return () => {
    counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
    return `${prefix}${counter.toString(36)}`;
  };
}

/** With traces on, every log line names the trace and span it was written in (pino's mixin). */
function traceIds(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context ? { traceId: context.traceId, spanId: context.spanId } : {};
}
