import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startTracing, type SpanExporter } from './tracing.js';
import { loadConfig } from './config.js';
import type { Database } from './db/client.js';

/**
 * Issue 31's traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, every request is a trace (HTTP and Fastify
 * instrumentations), its id is the request id — in every log line and in the x-request-id answer — and
 * the spans reach the exporter (here an in-memory one in place of OTLP).
 */
type Exported = Parameters<SpanExporter['export']>[0];
class MemoryExporter {
  spans: Exported = [];
  export(spans: Exported, done: (result: { code: number }) => void) {
    this.spans.push(...spans);
    done({ code: 0 });
  }
  async shutdown() {}
  async forceFlush() {}
}

const exporter = new MemoryExporter();
const lines: Record<string, unknown>[] = [];
let sdk: ReturnType<typeof startTracing>;
let app: FastifyInstance;
let dataDir: string;
let database: Database;

beforeAll(async () => {
  const config = loadConfig({ DATA_DIR: (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-trace-'))), LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
  sdk = startTracing(config.tracing, exporter as unknown as SpanExporter);
  // As main.ts does: the service's modules (Fastify, http, pg) are loaded after tracing has started.
  const { buildApp } = await import('./app.js');
  const { createDatabase } = await import('./db/client.js');
  database = await createDatabase({});
  await database.migrate();
  app = await buildApp(config, { database, logStream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await database?.close();
  await sdk?.shutdown();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('traces', () => {
  it('continues a caller’s trace (traceparent)', async () => {
    const { port } = app.server.address() as AddressInfo;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await fetch(`http://127.0.0.1:${port}/api/health`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.headers.get('x-request-id')).toBe(traceId);
  });

  it('puts the trace id in the request’s log lines and the x-request-id answer, and exports its spans', async () => {
    const { port } = app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const logged = lines.filter((l) => l.reqId === id);
    expect(logged.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    for (const line of logged) expect(line.traceId).toBe(id);

    await sdk.shutdown(); // flushes the batch
    const traced = exporter.spans.filter((s) => s.spanContext().traceId === id);
    expect(traced.length).toBeGreaterThanOrEqual(1);
    expect(traced.map((s) => s.name).join(' ')).toMatch(/GET/);
  });

});
