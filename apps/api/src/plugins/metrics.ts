import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/client.js';
import type { OperationRecorder } from '../lib/operation-outcome.js';
import { RequestDurations, type Series } from '../lib/request-durations.js';
import { bearerMatches } from '../lib/bearer-token.js';

/**
 * Prometheus metrics: one registry per app (tests build several apps in one process), the
 * figures fed by hooks here and by small call sites (`app.metrics.webhookDeliveries.inc(…)`); signed
 * operations are counted where they are decided (`app.metrics.recordOperation`, modules/operations).
 *
 * Labels never carry user input: the route is the pattern Fastify matched (`/api/device/:lockId/execute`,
 * never the path), `unmatched` for anything no route took; the method is one of the known ones or
 * `OTHER`; a refusal's reason is its kind (lib/operation-outcome.ts): the key in the contract's catalogue
 * of the reason it was refused for, decided where it was refused (never read from its message), or `other`.
 *
 * Served (`GET /metrics`, text format 0.0.4) on its own port (METRICS_PORT on METRICS_HOST — 127.0.0.1 by
 * default — with the admin routes) and/or on the public port behind `Authorization: Bearer $METRICS_TOKEN`.
 * Neither set: not served at all.
 */
export interface Metrics {
  registry: Registry;
  httpDuration: RequestDurations;
  operations: Counter<'type' | 'outcome' | 'reason'>;
  certificates: Counter<'outcome'>;
  signIns: Counter<'outcome'>;
  rateLimited: Counter<'route'>;
  webhookDeliveries: Counter<'outcome'>;
  /** Counts a signed operation's outcome in `operations` (type, outcome, reason; `none` when it has no reason). */
  recordOperation: OperationRecorder;
  /** A request no route took (the not-found handler calls it): its duration is recorded as `unmatched`. */
  unmatched(request: FastifyRequest, reply: FastifyReply): void;
  /** The metrics port's server (with the admin routes); null until listen(). */
  server: FastifyInstance | null;
  /**
   * Starts the metrics port when METRICS_PORT is set (server.ts, after the public port) on METRICS_HOST
   * (127.0.0.1 unless set: never the public port's 0.0.0.0 by default); answers its address.
   */
  listen(host?: string, port?: number): Promise<string | null>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface MetricsOptions {
  apiPrefix: string;
  database: Database;
  token?: string;
  port?: number;
  /** The metrics port's address (METRICS_HOST, 127.0.0.1 by default). */
  host?: string;
  /** How many server-sent-event streams are open on this instance. */
  sseClients: () => number;
  /** Registers the admin routes (backups) on the metrics port. */
  adminRoutes?: (server: FastifyInstance, app: FastifyInstance) => Promise<void> | void;
}

export function registerMetrics(app: FastifyInstance, options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counters = createCounters(registry);
  const deviceRequests = registerGauges(app, registry, options);
  countRoutes(app, options.apiPrefix, counters, deviceRequests);
  const record = timeRequests(app, counters);
  const serve = async (_request: FastifyRequest, reply: FastifyReply) => {
    const body = await registry.metrics();
    return reply.type(registry.contentType).header('cache-control', 'no-store').send(body);
  };
  if (options.token) {
    const token = options.token;
    app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, token))
        return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ code: 401, message: 'A bearer token (METRICS_TOKEN) is needed for /metrics' });
      return serve(request, reply);
    });
  }

  const { operations } = counters;
  const metrics: Metrics = {
    registry,
    ...counters,
    recordOperation: (outcome) => operations.inc({ type: outcome.type, outcome: outcome.outcome, reason: 'reason' in outcome ? outcome.reason : 'none' }),
    unmatched: (request, reply) => void reply.raw.once('finish', () => record('unmatched', request, reply)),
    server: null,
    async listen(host = options.host ?? '127.0.0.1', port = options.port) {
      if (port === undefined) return null;
      const server = Fastify({ logger: false });
      server.get('/metrics', serve);
      await options.adminRoutes?.(server, app);
      const address = await server.listen({ host, port });
      metrics.server = server;
      return address;
    },
  };
  app.decorate('metrics', metrics);
  app.addHook('onClose', async () => {
    await metrics.server?.close();
    registry.clear();
  });
  return metrics;
}

type Counters = Pick<Metrics, 'httpDuration' | 'operations' | 'certificates' | 'signIns' | 'rateLimited' | 'webhookDeliveries'>;

function createCounters(registry: Registry): Counters {
  const httpDuration = new RequestDurations(
    'latchkey_http_request_duration_seconds',
    'HTTP requests by route pattern, method and status class',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  registry.registerMetric(httpDuration as unknown as Parameters<Registry['registerMetric']>[0]);
  const operations = new Counter({
    name: 'latchkey_operations_total',
    help: 'Signed lock operations (POST …/device/{lockId}/execute) by type and outcome: accepted, refused (with the reason), unavailable (the lock could not be reached or decided in time), error',
    labelNames: ['type', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const certificates = new Counter({
    name: 'latchkey_certificates_total',
    help: 'Certificate requests (POST …/auth/certificate) by outcome: issued, refused, error',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const signIns = new Counter({
    name: 'latchkey_sign_ins_total',
    help: 'Portal sign-ins (POST …/auth/token) by outcome: success, failed, rate_limited, error',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'latchkey_rate_limit_refusals_total',
    help: 'Requests refused with 429 by route pattern',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'latchkey_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, will be retried), failed (the last attempt failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return { httpDuration, operations, certificates, signIns, rateLimited, webhookDeliveries };
}

/** The gauges, read when scraped; answers the one fed by hooks (device requests in flight). */
function registerGauges(app: FastifyInstance, registry: Registry, options: MetricsOptions): Gauge {
  const { database } = options;
  let queueSchema: string | null | undefined;
  new Gauge({
    name: 'latchkey_webhook_queue_depth',
    help: 'Webhook deliveries waiting: owed (written, not yet handed to the queue) and queued (in the queue, not yet being sent, retries included)',
    labelNames: ['stage'] as const,
    registers: [registry],
    async collect() {
      // The queue's schema is pg-boss's own (its name changes with pg-boss's major version): the newest one.
      queueSchema ??= await database
        .executeSql(`select table_schema as s from information_schema.tables where table_name = 'job' and table_schema like 'pgboss%' order by table_schema desc limit 1`)
        .then(({ rows }) => (rows[0] as { s: string } | undefined)?.s ?? null)
        .catch(() => null);
      const [owed, queued] = await Promise.all([
        countOf(database, 'select count(*)::int as n from webhook_deliveries where relay_after is not null'),
        queueSchema ? countOf(database, `select count(*)::int as n from "${queueSchema}".job where name = 'webhook-delivery' and state < 'active'`) : null,
      ]);
      if (owed !== null) this.set({ stage: 'owed' }, owed);
      if (queued !== null) this.set({ stage: 'queued' }, queued);
    },
  });
  new Gauge({
    name: 'latchkey_sse_connections',
    help: 'Open live-update streams (server-sent events) on this instance',
    registers: [registry],
    collect() {
      this.set(options.sseClients());
    },
  });
  new Gauge({
    name: 'latchkey_devices_connected',
    help: 'Lock devices whose presence is online (all instances: the database’s figure)',
    registers: [registry],
    async collect() {
      const n = await countOf(database, 'select count(*)::int as n from lock_devices where connected');
      if (n !== null) this.set(n);
    },
  });
  const deviceRequests = new Gauge({
    name: 'latchkey_device_requests_in_flight',
    help: 'Lock-user device requests (…/device/*) being answered now; devices speak request/response, with no standing connection',
    registers: [registry],
  });
  new Gauge({
    name: 'latchkey_http_connections',
    help: 'Open TCP connections to the public port (browsers, devices, the load balancer)',
    registers: [registry],
    async collect() {
      const n = await new Promise<number>((resolve) => (app.server.listening ? app.server.getConnections((err, count) => resolve(err ? 0 : count)) : resolve(0)));
      this.set(n);
    },
  });
  new Gauge({
    name: 'latchkey_db_pool_connections',
    help: 'Database connections of this instance by state: max (the pool size), total, idle, waiting (queries waiting for a connection)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = database.poolStats();
      for (const state of ['max', 'total', 'idle', 'waiting'] as const) this.set({ state }, stats[state]);
    },
  });
  return deviceRequests;
}

function countRoutes(app: FastifyInstance, apiPrefix: string, { signIns, certificates }: Counters, deviceRequests: Gauge): void {
  // Route-level hooks on the few routes counted by kind: nothing is added to any other route.
  // Sign-in: POST …/auth/token (…/auth/login before it was renamed).
  const logins = new Set([`${apiPrefix}/auth/token`, `${apiPrefix}/auth/login`]);
  const certificate = `${apiPrefix}/auth/certificate`;
  const devicePrefix = `${apiPrefix}/device/`;
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat();
    if (logins.has(route.url) && methods.includes('POST')) addHook(route, 'onResponse', (_req, reply) => signIns.inc({ outcome: signInOutcome(reply.statusCode) }));
    else if (route.url === certificate && methods.includes('POST'))
      addHook(route, 'onResponse', (_req, reply) => certificates.inc({ outcome: reply.statusCode < 300 ? 'issued' : reply.statusCode < 500 ? 'refused' : 'error' }));
    if (route.url.startsWith(devicePrefix)) {
      addHook(route, 'onRequest', () => deviceRequests.inc());
      addHook(route, 'onResponse', () => deviceRequests.dec());
    }
  });
}

/** Times every request and counts 429s by route; answers the recorder the not-found handler uses. */
function timeRequests(app: FastifyInstance, { httpDuration, rateLimited }: Counters) {
  // Every request's duration (Fastify measured it) and a 429's route, taken when the answer is sent: in the
  // onSend step every request already goes through, not onResponse, whose 'finish' listener on each
  // response cost the authenticated read 12–15 % of its throughput (bench/run.mjs, 0.52× → 0.40× of bare
  // Fastify). A matched route's label is its pattern, bound when the route is added (reading
  // request.routeOptions builds an object per request); anything no route took is `unmatched`.
  const children = new Map<string, Series>();
  const record = (route: string, request: FastifyRequest, reply: FastifyReply) => {
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    const status = reply.statusCode;
    const key = `${route} ${method} ${(status / 100) | 0}`;
    let child = children.get(key);
    if (!child) {
      child = httpDuration.series({ route, method, status_class: `${(status / 100) | 0}xx` });
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    if (status === 429) rateLimited.inc({ route });
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const pattern = route.url;
    const timed = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
      record(pattern, request, reply);
      done(null, payload);
    };
    const existing = route.onSend as unknown;
    (route as unknown as Record<string, unknown>).onSend = [...(existing ? [existing].flat() : []), timed];
  });
  // What no route took is timed by the not-found handler (plugins/errors.ts calls `unmatched`), not by a
  // hook on every request: that global hook alone cost the get 0.02–0.03× of bare Fastify.
  return record;
}

type Hook = (request: FastifyRequest, reply: FastifyReply, error?: unknown) => void;
function addHook(route: RouteOptions, name: 'onRequest' | 'onResponse' | 'onError', hook: (request: FastifyRequest, reply: FastifyReply, error: Error) => void): void {
  const wrapped =
    name === 'onError'
      ? (request: FastifyRequest, reply: FastifyReply, error: Error, done: () => void) => {
          hook(request, reply, error);
          done();
        }
      : (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
          hook(request, reply, undefined as unknown as Error);
          done();
        };
  const existing = route[name] as Hook | Hook[] | undefined;
  (route as unknown as Record<string, unknown>)[name] = [...(existing ? [existing].flat() : []), wrapped];
}

function signInOutcome(status: number): string {
  if (status < 300) return 'success';
  if (status === 429) return 'rate_limited';
  if (status < 500) return 'failed';
  return 'error';
}

async function countOf(database: Database, text: string): Promise<number | null> {
  try {
    const { rows } = await database.executeSql(text);
    return (rows[0] as { n: number } | undefined)?.n ?? 0;
  } catch {
    return null; // the queue's schema not there yet, or the database down: the figure is left out
  }
}
