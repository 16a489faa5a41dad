import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers.js';

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

  it('serves the portal config with upload and CDN bases', async () => {
    const res = await t.app.inject({ url: '/api/config' });
    expect(res.json()).toMatchObject({
      uploadBaseUrl: 'http://localhost:3000/api/uploads',
      cdnBaseUrl: 'http://localhost:3000/cdn',
      platformAudience: 'http://localhost:3000',
    });
  });

  it('serves the configured platform audience, which Getting Started shows to owners', async () => {
    const other = await createTestApp({ PLATFORM_AUDIENCE: 'https://doors.example.test' });
    try {
      expect((await other.app.inject({ url: '/api/config' })).json()).toMatchObject({ platformAudience: 'https://doors.example.test' });
    } finally {
      await other.close();
    }
  });

  it('answers JSON 404 for unknown API routes', async () => {
    const res = await t.app.inject({ url: '/api/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 404, message: 'Not found' });
  });

  it('publishes an OpenAPI document', async () => {
    const res = await t.app.inject({ url: '/api/docs/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveProperty('openapi');
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

  it('rate limits the API but not the probes, the portal files or served logos', async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>portal</title>');
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js'), 'export {};');
    const limited = await createTestApp({ ANONYMOUS_RATE_LIMIT_MAX: '3', WEB_DIST_DIR: dist });
    const statuses = async (url: string, n = 6) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await limited.app.inject({ url })).statusCode);
      return out;
    };
    try {
      expect(await statuses('/api/ready')).toEqual([200, 200, 200, 200, 200, 200]);
      expect(await statuses('/api/health')).toEqual([200, 200, 200, 200, 200, 200]);
      expect(await statuses('/assets/chunk.js')).toEqual([200, 200, 200, 200, 200, 200]);
      expect(await statuses('/cdn/logos/none.png')).toEqual([404, 404, 404, 404, 404, 404]);
      const api: number[] = [];
      for (let i = 0; i < 4; i++) {
        api.push((await limited.app.inject({ method: 'POST', url: '/api/auth/register', payload: {} })).statusCode);
      }
      expect(api).toEqual([400, 400, 400, 429]);
    } finally {
      await limited.close();
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });

  it('serves the portal’s precompressed assets to browsers that accept them, the plain file otherwise', async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>portal</title>');
    const js = 'export const a = 1;'.repeat(100);
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js'), js);
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js.br'), zlib.brotliCompressSync(js));
    fs.writeFileSync(path.join(dist, 'assets', 'chunk.js.gz'), zlib.gzipSync(js));
    const portal = await createTestApp({ WEB_DIST_DIR: dist });
    try {
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
    } finally {
      await portal.close();
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });
});
