import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { trace } from '@opentelemetry/api';
import { startTracing, type SpanExporter } from './tracing.js';
import { loadConfig } from './config.js';
import type { Database } from './db/client.js';
import { MemoryExporter } from '../test/fixtures/memory-exporter.js';

/**
 * Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, every request is a trace (HTTP and Fastify
 * instrumentations), its id is the request id — in every log line and in the x-request-id answer — and
 * the spans reach the exporter (here an in-memory one in place of OTLP). On PostgreSQL (the api-postgres
 * project, TEST_DATABASE_URL) the request's queries are pg spans and its route a Fastify span, in its trace.
 *
 * Nothing that loads pg, http or Fastify is imported above (test/helpers.ts would): they load after
 * tracing has started, as in main.ts.
 */
const onPostgres = process.env.TEST_DB_KIND === 'postgres';

const exporter = new MemoryExporter();
const lines: Record<string, unknown>[] = [];
let sdk: ReturnType<typeof startTracing>;
let app: FastifyInstance;
let dataDir: string;
let database: Database;
let dropDatabase: (() => Promise<void>) | undefined;

/** Hands the spans ended so far to the exporter (the SDK's batch processor holds them otherwise). */
async function flush(): Promise<void> {
  const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
  await provider.getDelegate?.().forceFlush?.();
}

beforeAll(async () => {
  const config = loadConfig({ DATA_DIR: (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-trace-'))), LOG_LEVEL: 'info', ACCESS_LOG: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
  sdk = startTracing(config.tracing, exporter as unknown as SpanExporter);
  // As main.ts does: the service's modules (Fastify, http, pg) are loaded after tracing has started.
  const { buildApp } = await import('./app.js');
  const { createTestDatabase } = await import('../test/helpers.js');
  ({ database, drop: dropDatabase } = await createTestDatabase());
  app = await buildApp(config, { database, logStream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await database?.close();
  await dropDatabase?.();
  await sdk?.shutdown();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('traces', () => {
  it.skipIf(!onPostgres)('traces a request’s PostgreSQL queries (pg) and its route (Fastify) in the request’s trace', async () => {
    const { port } = app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/ready`); // one query: the database's ping
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    await flush();
    const traced = exporter.spans.filter((s) => s.spanContext().traceId === id);
    const scopes = (name: string) => traced.filter((s) => s.instrumentationScope.name === name);
    const pgSpans = scopes('@opentelemetry/instrumentation-pg');
    expect(pgSpans.length, traced.map((s) => `${s.instrumentationScope.name}: ${s.name}`).join('\n')).toBeGreaterThanOrEqual(1);
    expect(pgSpans.some((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql')).toBe(true);
    const fastifySpans = scopes('@fastify/otel');
    expect(fastifySpans.length).toBeGreaterThanOrEqual(1);
    expect(fastifySpans.some((s) => JSON.stringify(s.attributes).includes('/api/ready') || s.name.includes('/api/ready'))).toBe(true);
    // The query ran inside the request: its span descends from the request's own.
    const ids = new Set(traced.map((s) => s.spanContext().spanId));
    for (const span of pgSpans) expect(ids.has(span.parentSpanContext?.spanId ?? '')).toBe(true);
  });

  it('continues a caller’s trace (traceparent)', async () => {
    const { port } = app.server.address() as AddressInfo;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await fetch(`http://127.0.0.1:${port}/api/health`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.headers.get('x-request-id')).toBe(traceId);
  });

  it('records no query value and no email address of a URL in its spans or its log line', async () => {
    const { port } = app.server.address() as AddressInfo;
    const secret = `tr4ce-secret-${randomUUID()}`;
    const email = `traced-${randomUUID().slice(0, 8)}@example.com`;
    const res = await fetch(`http://127.0.0.1:${port}/api/account/email/verify?code=${secret}&other=${secret}x`, { method: 'PUT' });
    expect(res.status).toBe(400);
    const id = res.headers.get('x-request-id')!;
    const invite = await fetch(`http://127.0.0.1:${port}/api/share/invite/${encodeURIComponent(email)}?visitor=${secret}`, { method: 'POST' });
    const inviteId = invite.headers.get('x-request-id')!;
    await flush();
    const traced = exporter.spans.filter((s) => [id, inviteId].includes(s.spanContext().traceId));
    expect(traced.length).toBeGreaterThanOrEqual(2);
    const recorded = JSON.stringify([traced.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })), lines]);
    expect(recorded).toContain('code=REDACTED');
    expect(recorded).not.toContain(secret);
    expect(recorded).not.toContain(email);
    expect(recorded).not.toContain(encodeURIComponent(email));
    const completed = lines.find((l) => l.reqId === id && l.msg === 'request completed') as { req?: { url?: string } } | undefined;
    expect(completed?.req?.url).toBe('/api/account/email/verify?code=REDACTED&other=REDACTED');
  });

  it('puts the trace id in the request’s log lines and the x-request-id answer, and exports its spans', async () => {
    const { port } = app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const logged = lines.filter((l) => l.reqId === id);
    // One access-log line per request (ACCESS_LOG), written when it completes.
    expect(logged.map((l) => l.msg)).toEqual(['request completed']);
    for (const line of logged) expect(line.traceId).toBe(id);

    await sdk.shutdown(); // flushes the batch
    const traced = exporter.spans.filter((s) => s.spanContext().traceId === id);
    expect(traced.length).toBeGreaterThanOrEqual(1);
    expect(traced.map((s) => s.name).join(' ')).toMatch(/GET/);
  });

});
