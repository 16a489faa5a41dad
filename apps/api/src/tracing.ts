import { createRequire } from 'node:module';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Attributes } from '@opentelemetry/api';
import type { Config } from './config.js';
import { redactPath, redactQuery, redactUrl } from './lib/redact-url.js';

export type SpanExporter = NodeSDKConfiguration['traceExporter'];

/**
 * OpenTelemetry traces, loaded by main.ts only when OTEL_EXPORTER_OTLP_ENDPOINT is set, before
 * the service's own code: off, none of this is even imported. The HTTP instrumentation opens a span per
 * request (continuing the caller's `traceparent`), @fastify/otel adds the route's hooks and handler, and
 * the pg instrumentation one span per query to PostgreSQL (the embedded PGlite is not traced). app.ts
 * puts the trace id in every log line and makes it the request id, answered as `x-request-id`.
 *
 * The API ships as one bundle with pg external (apps/api/build.mjs), and the service's code is a chunk
 * loaded after this has started: pg is then first loaded here, through `require`, where the
 * instrumentation patches it; the service's `import pg` gets that same, patched module.
 */
export function startTracing(options: Config['tracing'], exporter?: SpanExporter): NodeSDK {
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    traceExporter: exporter ?? new OTLPTraceExporter({ url: `${(options.endpoint ?? '').replace(/\/+$/, '')}/v1/traces` }),
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => request.url === '/metrics', startIncomingSpanHook: redactedUrlAttributes }),
      new PgInstrumentation(),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        requestHook: (span, request) => span.setAttribute('url.path', redactUrl(request.url)),
      }),
    ],
  });
  sdk.start();
  createRequire(import.meta.url)('pg');
  return sdk;
}

/**
 * A request's `url.query` and `url.path` as its HTTP span records them: query values and email addresses in
 * the path redacted (lib/redact-url.ts), as in the log. The instrumentation puts these over its own (which
 * redact only a few well-known parameter names); @fastify/otel's `url.path`, the whole URL, gets the same
 * through its requestHook.
 */
function redactedUrlAttributes(request: { url?: string }): Attributes {
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  const attributes: Attributes = { 'url.path': redactPath(queryAt === -1 ? url : url.slice(0, queryAt)) };
  if (queryAt !== -1 && queryAt < url.length - 1) attributes['url.query'] = redactQuery(url.slice(queryAt + 1));
  return attributes;
}
