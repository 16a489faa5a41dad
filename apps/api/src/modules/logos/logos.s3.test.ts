import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors, deriveLogoUrl } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { startSigV4Proxy } from '../../../test/fixtures/sigv4-proxy.js';
import { makePng } from '../../../test/fixtures/images.js';
import { checkLogoUrl } from './logos.service.js';
import { seedApplication, seedOwner } from '../../../test/fixtures/logos.js';

/** The whole flow with STORAGE_DRIVER=s3: the API hands out presigned URLs, the bytes go to the bucket. */
let server: S3rver;
let proxy: Awaited<ReturnType<typeof startSigV4Proxy>>;
let directory: string;
let t: TestApp;
let token: string;
let appId: string;

beforeAll(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-s3rver-'));
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: 'logos', configs: [] }] });
  const { port } = await server.run();
  proxy = await startSigV4Proxy(`http://127.0.0.1:${port}`, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
  t = await createTestApp({
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: proxy.endpoint,
    S3_BUCKET: 'logos',
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    CDN_BASE_URL: 'https://cdn.example.com',
  });
  const owner = await seedOwner(t);
  token = owner.token;
  appId = await seedApplication(t, owner.userId);
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await server?.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('logos with the S3 driver', () => {
  it('presigns a PUT the portal can use, and the derived logoUrl is accepted once the object checks out', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/logo`, headers: { authorization: `Bearer ${token}` }, payload: { contentType: 'image/png' } });
    expect(res.statusCode).toBe(200);
    const { uploadUrl } = res.json() as { uploadUrl: string };
    const config = (await t.app.inject({ url: '/api/config' })).json();
    expect(config.uploadBaseUrl).toBe(t.app.storage.uploadBaseUrl);
    expect(uploadUrl.startsWith(`${config.uploadBaseUrl}/logos/${appId}/`)).toBe(true);
    const logoUrl = deriveLogoUrl(uploadUrl, config);
    expect(logoUrl).toMatch(new RegExp(`^https://cdn.example.com/logos/${appId}/[0-9a-f]{32}\\.png$`));
    // Not uploaded yet: refused.
    await expect(checkLogoUrl(t.app.storage, appId, logoUrl)).rejects.toMatchObject({ statusCode: 400, message: apiErrors.logoUrlNotAllowed });
    const put = await fetch(uploadUrl, { method: 'PUT', body: new Uint8Array(makePng()), headers: { 'content-type': 'image/png' } });
    expect(put.status).toBe(200);
    await expect(checkLogoUrl(t.app.storage, appId, logoUrl)).resolves.toBeUndefined();
  });

  it('has no local upload or CDN route', async () => {
    const put = await t.app.inject({ method: 'PUT', url: `/api/uploads/logos/${appId}/${'0'.repeat(32)}.png?expires=1&sig=x`, headers: { 'content-type': 'image/png' }, payload: makePng() });
    expect(put.statusCode).toBe(404);
    const cdn = await t.app.inject({ url: `/cdn/logos/${appId}/${'0'.repeat(32)}.png` });
    expect(cdn.statusCode).toBe(404);
    expect(cdn.json()).toEqual({ code: 404, message: apiErrors.notFound });
  });
});
