import path from 'node:path';
import { z } from 'zod';
import { DEVICE_TIMEOUT_DEFAULT_S } from '@latchkey/contract';

/**
 * The only reader of process.env (lint enforces it). Every variable here is in the README's table and in
 * .env.example; defaults make `npm start` work on a fresh machine with nothing set.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (def: number) => z.coerce.number().int().positive().default(def);

const envSchema = z.object({
  NODE_ENV: z.string().default('production'),
  HOST: z.string().default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_URL: z.url().optional(),
  API_PREFIX: z.string().regex(/^\/[a-z0-9-]+$/).default('/api'),
  DATA_DIR: z.string().default('.data'),
  WEB_DIST_DIR: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** One log line per request (its URL redacted); off by default: it costs a log write on every request. */
  ACCESS_LOG: bool.default(false),
  TRUST_PROXY: bool.default(false),

  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_SIZE: int(10),
  ACCESS_CACHE: bool.default(true),

  JWT_PRIVATE_KEY: z.string().optional(),
  JWT_PREVIOUS_PUBLIC_KEYS: z.string().optional(),
  JWT_ISSUER: z.string().default('latchkey'),
  JWT_AUDIENCE: z.string().default('latchkey-portal'),
  SIGNING_KEYS_REFRESH_SECONDS: int(5),
  SECRETS_ENCRYPTION_KEY: z.string().min(32).optional(),
  ACCESS_TOKEN_TTL_SECONDS: int(900),
  REFRESH_TOKEN_TTL_SECONDS: int(60 * 60 * 24 * 30),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(19456).default(19456),
  ARGON2_ITERATIONS: z.coerce.number().int().min(2).default(2),
  ARGON2_PARALLELISM: z.coerce.number().int().min(1).default(1),
  INVITE_TTL_SECONDS: int(60 * 60 * 24 * 7),
  SSE_KEEPALIVE_SECONDS: int(15),
  PLATFORM_AUDIENCE: z.string().min(1).optional(),
  TOKEN_LEEWAY_SECONDS: z.coerce.number().int().min(0).max(300).default(30),

  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  UPLOAD_SIGNING_SECRET: z.string().min(32).optional(),
  UPLOAD_URL_TTL_SECONDS: int(300),
  CDN_BASE_URL: z.url().optional(),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(false),

  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Latchkey <no-reply@latchkey.local>'),

  REDIS_URL: z.string().optional(),
  RATE_LIMIT_MAX: int(600),
  RATE_LIMIT_WINDOW_SECONDS: int(60),
  ANONYMOUS_RATE_LIMIT_MAX: int(300),
  DIRECTORY_RATE_LIMIT_MAX: int(30),
  /** Certificates (POST /auth/certificate) per lock user and window: each one is a CA signature. */
  CERTIFICATE_RATE_LIMIT_MAX: int(20),
  CERTIFICATE_RATE_LIMIT_WINDOW_SECONDS: int(3600),
  /** Refused signed operations per lock user and window (five times that per address). */
  REFUSED_OPERATION_RATE_LIMIT_MAX: int(20),
  LOGIN_RATE_LIMIT_MAX: int(10),
  LOGIN_RATE_LIMIT_WINDOW_SECONDS: int(60),
  /** Login attempts per address across all emails; unset = 3 × LOGIN_RATE_LIMIT_MAX. */
  LOGIN_ADDRESS_RATE_LIMIT_MAX: z.coerce.number().int().positive().optional(),

  OUTBOUND_ALLOW: z.string().default(''),
  WEBHOOK_RETRY_DELAY_SECONDS: int(15),
  WEBHOOK_RETRY_LIMIT: int(12),
  WEBHOOK_TIMEOUT_SECONDS: int(10),
  WEBHOOK_WORKER: z.enum(['true', 'false']).default('true'),

  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** The address METRICS_PORT binds to: loopback unless a scraper elsewhere must reach it (never HOST's 0.0.0.0). */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** The embedded MQTT broker's TLS port for devices (0: any free port). Unused with MQTT_URL. */
  MQTT_PORT: z.coerce.number().int().min(0).max(65535).default(8883),
  /** An external broker (mqtts://host:8883) every instance connects to instead of the embedded one. */
  MQTT_URL: z.url().optional(),
  /** The broker URL devices are given at provisioning; defaults to MQTT_URL, else mqtts://<PUBLIC_URL host>:MQTT_PORT. */
  MQTT_PUBLIC_URL: z.url().optional(),
  /** The password an external broker's HTTP auth backend sends (deploy/rabbitmq, deploy/emqx); without it API_PREFIX/broker-auth does not exist. */
  BROKER_AUTH_SECRET: z.string().min(16).optional(),
  /** How long an operation on a device-backed lock waits for the device's result before answering 504. */
  DEVICE_TIMEOUT_SECONDS: z.coerce.number().positive().max(60).default(DEVICE_TIMEOUT_DEFAULT_S),
  METRICS_TOKEN: z.string().min(16).optional(),
  /**
   * SIGTERM: for this long readiness (GET /ready) answers 503 while every other request is still served,
   * so a load balancer probing it stops sending new requests before the port closes. 0: close at once.
   */
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(120).default(5),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_SERVICE_NAME: z.string().default('latchkey-api'),

  PRIVACY_POLICY_URL: z.url().default('https://www.latchkey.dev/privacy'),
  DOCS_URL: z.url().default('https://developer.latchkey.dev'),
});

export type Env = Record<string, string | undefined>;

// eslint-disable-next-line max-lines-per-function -- one flat table from the environment to the configuration
export function loadConfig(env: Env = process.env) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const dataDir = path.resolve(e.DATA_DIR);
  if (e.STORAGE_DRIVER === 's3' && (!e.S3_BUCKET || !e.CDN_BASE_URL))
    throw new Error('Invalid configuration:\n  STORAGE_DRIVER=s3 needs S3_BUCKET and CDN_BASE_URL');
  return {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    apiPrefix: e.API_PREFIX,
    dataDir,
    webDistDir: e.WEB_DIST_DIR ? path.resolve(e.WEB_DIST_DIR) : undefined,
    logLevel: e.LOG_LEVEL,
    accessLog: e.ACCESS_LOG,
    trustProxy: e.TRUST_PROXY,
    database: { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, accessCache: e.ACCESS_CACHE },
    jwt: {
      privateKey: e.JWT_PRIVATE_KEY,
      previousPublicKeys: e.JWT_PREVIOUS_PUBLIC_KEYS,
      issuer: e.JWT_ISSUER,
      audience: e.JWT_AUDIENCE,
      accessTtl: e.ACCESS_TOKEN_TTL_SECONDS,
      refreshTtl: e.REFRESH_TOKEN_TTL_SECONDS,
      keysRefreshSeconds: e.SIGNING_KEYS_REFRESH_SECONDS,
    },
    /** Seals signing keys and server secrets in the database (lib/secret-box.ts); unset: stored as they are. */
    secretsEncryptionKey: e.SECRETS_ENCRYPTION_KEY,
    argon2: { memoryCost: e.ARGON2_MEMORY_KIB, timeCost: e.ARGON2_ITERATIONS, parallelism: e.ARGON2_PARALLELISM },
    inviteTtl: e.INVITE_TTL_SECONDS,
    /** Server-sent events (the sandbox's live updates): a comment this often keeps proxies from closing idle streams. */
    liveEvents: { keepAliveMs: e.SSE_KEEPALIVE_SECONDS * 1000 },
    /** Tokens an application's own backend signs for its users (GET /platform/auth). */
    // Defaults to this deployment's public URL: the one value an application's backend can know it by.
    platformTokens: { audience: e.PLATFORM_AUDIENCE ?? publicUrl, leeway: e.TOKEN_LEEWAY_SECONDS },
    storage: {
      driver: e.STORAGE_DRIVER,
      signingSecret: e.UPLOAD_SIGNING_SECRET,
      uploadTtl: e.UPLOAD_URL_TTL_SECONDS,
      cdnBaseUrl: (e.CDN_BASE_URL ?? `${publicUrl}/cdn`).replace(/\/+$/, ''),
      s3: {
        endpoint: e.S3_ENDPOINT,
        region: e.S3_REGION,
        bucket: e.S3_BUCKET,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.S3_FORCE_PATH_STYLE,
      },
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    redisUrl: e.REDIS_URL,
    rateLimit: {
      max: e.RATE_LIMIT_MAX,
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      loginMax: e.LOGIN_RATE_LIMIT_MAX,
      loginWindowSeconds: e.LOGIN_RATE_LIMIT_WINDOW_SECONDS,
      /** Per address across emails (password spraying); per address + email stays loginMax. */
      loginAddressMax: e.LOGIN_ADDRESS_RATE_LIMIT_MAX ?? 3 * e.LOGIN_RATE_LIMIT_MAX,
      anonymousMax: e.ANONYMOUS_RATE_LIMIT_MAX,
      directoryMax: e.DIRECTORY_RATE_LIMIT_MAX,
      certificateMax: e.CERTIFICATE_RATE_LIMIT_MAX,
      certificateWindowSeconds: e.CERTIFICATE_RATE_LIMIT_WINDOW_SECONDS,
      refusedMax: e.REFUSED_OPERATION_RATE_LIMIT_MAX,
    },
    /** Hosts the outbound guard (lib/outbound.ts) lets through to private addresses and over http: dev and tests only. */
    outbound: {
      allowHosts: e.OUTBOUND_ALLOW.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
      /** Development defaults (NODE_ENV other than production, or no PUBLIC_URL): a refused URL names what OUTBOUND_ALLOW would let through. */
      hints: e.NODE_ENV !== 'production' || e.PUBLIC_URL === undefined,
    },
    /**
     * GET /metrics (Prometheus): on its own port (METRICS_PORT, with the admin routes) and/or on the public
     * port behind a bearer token (METRICS_TOKEN). Neither set: not served (plugins/metrics.ts).
     */
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN },
    /**
     * Devices (modules/devices, plugins/mqtt): the embedded broker listens with TLS on `port` (started by
     * server.ts, like the HTTP port) and over WebSocket at /mqtt; with `url` every instance is a client of
     * that broker instead. `publicUrl` is what devices are told at provisioning.
     */
    mqtt: {
      port: e.MQTT_PORT,
      url: e.MQTT_URL,
      publicUrl: e.MQTT_PUBLIC_URL ?? e.MQTT_URL ?? `mqtts://${new URL(publicUrl).hostname}:${e.MQTT_PORT}`,
      deviceTimeoutMs: e.DEVICE_TIMEOUT_SECONDS * 1000,
      brokerAuthSecret: e.BROKER_AUTH_SECRET,
    },
    /** SIGTERM's drain (server.ts): readiness fails this long before the port closes. */
    shutdown: { drainMs: e.SHUTDOWN_DRAIN_SECONDS * 1000 },
    /** OpenTelemetry traces (src/tracing.ts): off unless an OTLP endpoint is set. */
    tracing: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME },
    portal: { privacyPolicyUrl: e.PRIVACY_POLICY_URL, docsUrl: e.DOCS_URL },
    /**
     * Webhook deliveries (modules/webhooks): a failed attempt is retried after about delay·2^n seconds
     * (n = 1 … limit, with jitter): 15 s and 12 retries spread them over about a day. `worker` false: this
     * instance enqueues but does not deliver.
     */
    webhooks: {
      retryDelaySeconds: e.WEBHOOK_RETRY_DELAY_SECONDS,
      retryLimit: e.WEBHOOK_RETRY_LIMIT,
      timeoutSeconds: e.WEBHOOK_TIMEOUT_SECONDS,
      worker: e.WEBHOOK_WORKER === 'true',
    },
  };
}

export type Config = ReturnType<typeof loadConfig>;
