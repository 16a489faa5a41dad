import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGO_CONTENT_TYPES, WEBHOOK_EVENTS, WEBHOOK_URL_MAX_LENGTH } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';

/** The parts of an OpenAPI 3 document these tests read. */
interface Operation {
  security?: unknown;
  parameters?: unknown[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface OpenApi {
  openapi: string;
  components: { securitySchemes: unknown };
  paths: Record<string, Record<string, Operation | undefined>>;
}
const bodyOf = (op: Operation) => op.requestBody?.content['application/json']?.schema;
const answerOf = (op: Operation, status: string) => op.responses[status]?.content?.['application/json']?.schema;

describe('health, readiness, config and unknown routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers health and readiness', async () => {
    expect((await t.app.inject({ url: '/api/health' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/api/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('fails readiness while draining for a shutdown, and still serves everything else, each answer closing its connection', async () => {
    t.app.lifecycle.draining = true;
    try {
      const ready = await t.app.inject({ url: '/api/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.headers.connection).toBe('close');
      const health = await t.app.inject({ url: '/api/health' });
      expect(health.statusCode).toBe(200);
      expect(health.headers.connection).toBe('close');
      const config = await t.app.inject({ url: '/api/config' });
      expect(config.statusCode).toBe(200);
    } finally {
      t.app.lifecycle.draining = false;
    }
    const again = await t.app.inject({ url: '/api/ready' });
    expect(again.statusCode).toBe(200);
    expect(again.headers.connection).not.toBe('close');
  });

  it('serves the portal config with upload and CDN bases', async () => {
    const res = await t.app.inject({ url: '/api/config' });
    expect(res.json()).toMatchObject({
      uploadBaseUrl: 'http://localhost:3000/api/uploads',
      cdnBaseUrl: 'http://localhost:3000/cdn',
      platformAudience: 'http://localhost:3000',
    });
  });

  it('answers JSON 404 for unknown API routes', async () => {
    const res = await t.app.inject({ url: '/api/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 404, message: 'Not found' });
  });

  it('publishes an OpenAPI document: every API route, with the request and response shapes of the contract', async () => {
    const res = await t.app.inject({ url: '/api/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as OpenApi;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });

    // Each route the app registered under the API prefix is documented, with its method.
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    const routes = t.app.routeTable
      .filter((r) => r.url.startsWith('/api/') && !r.url.startsWith('/api/docs'))
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}')}`);
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((r) => !documented.has(r))).toEqual([]);

    // A public route: no security; the body and the answer as the contract has them.
    const login = doc.paths['/api/auth/token']!.post!;
    expect(login.security).toBeUndefined();
    expect(bodyOf(login)).toMatchObject({ type: 'object', required: ['email', 'password'] });
    expect(answerOf(login, '200')).toMatchObject({ required: ['authToken', 'refreshToken', 'privateKey', 'publicKey'], additionalProperties: false });

    // An owner's route: the bearer token, the path's id, the events and the secret shown once.
    const createWebhook = doc.paths['/api/platform/application/{applicationId}/webhook']!.post!;
    expect(createWebhook.security).toEqual([{ bearer: [] }]);
    expect(createWebhook.parameters).toEqual([expect.objectContaining({ in: 'path', name: 'applicationId', required: true })]);
    expect(bodyOf(createWebhook)).toMatchObject({
      required: ['url', 'events'],
      properties: { url: { type: 'string', maxLength: WEBHOOK_URL_MAX_LENGTH }, events: { type: 'array', items: { enum: [...WEBHOOK_EVENTS] } } },
    });
    expect(Object.keys(createWebhook.responses).sort()).toEqual(['201', '400', '401', '404', '409', '422']);
    expect(answerOf(createWebhook, '201')).toMatchObject({ required: ['id', 'url', 'events', 'createdAt', 'secret'], additionalProperties: false });
    expect(answerOf(createWebhook, '404')).toMatchObject({ required: ['code', 'message'] });

    // The logo upload: only the types the contract allows.
    const logo = doc.paths['/api/platform/application/{applicationId}/logo']!.post!;
    expect(bodyOf(logo)).toEqual({ type: 'object', properties: { contentType: { type: 'string', enum: [...LOGO_CONTENT_TYPES] } }, required: ['contentType'] });
    expect(answerOf(logo, '200')).toEqual({ type: 'object', properties: { uploadUrl: { type: 'string' } }, required: ['uploadUrl'], additionalProperties: false });
  });

  it('refuses oversize bodies with 413 JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/health',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ x: 'a'.repeat(300 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: 413, message: 'The request is too large' });
  });
});

/**
 * A service configured as a deployment is: a platform audience of its own, the portal's built files (a
 * plain asset beside its precompressed copies) and a low anonymous rate limit. One for the tests below;
 * only the rate-limit test sends requests the limit counts.
 */
describe('a service with the portal’s files, its own platform audience and a low rate limit', () => {
  const js = 'export const a = 1;'.repeat(100);
  let dist: string;
  let portal: TestApp;
  beforeAll(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>portal</title>');
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js'), js);
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js.br'), zlib.brotliCompressSync(js));
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js.gz'), zlib.gzipSync(js));
    portal = await createTestApp({ PLATFORM_AUDIENCE: 'https://doors.example.test', ANONYMOUS_RATE_LIMIT_MAX: '3', WEB_DIST_DIR: dist });
  });
  afterAll(async () => {
    await portal?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('serves the configured platform audience, which Getting Started shows to owners', async () => {
    expect((await portal.app.inject({ url: '/api/config' })).json()).toMatchObject({ platformAudience: 'https://doors.example.test' });
  });

  it('rate limits the API but not the probes, the portal files or served logos', async () => {
    const statuses = async (url: string, n = 6) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await portal.app.inject({ url })).statusCode);
      return out;
    };
    expect(await statuses('/api/ready')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/api/health')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/api/config')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/assets/chunk.js')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/cdn/logos/none.png')).toEqual([404, 404, 404, 404, 404, 404]);
    const api: number[] = [];
    for (let i = 0; i < 4; i++) {
      api.push((await portal.app.inject({ method: 'POST', url: '/api/auth/register', payload: {} })).statusCode);
    }
    expect(api).toEqual([400, 400, 400, 429]);
  });

  it('serves the portal’s precompressed assets to browsers that accept them, the plain file otherwise', async () => {
    const br = await portal.app.inject({ url: '/assets/chunk.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(js);
    const gz = await portal.app.inject({ url: '/assets/chunk.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    const plain = await portal.app.inject({ url: '/assets/chunk.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(js);
  });
});
