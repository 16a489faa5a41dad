import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { apiErrors, deriveLogoUrl, LOGO_MAX_DIMENSION_PX, messages } from '@latchkey/contract';
import { createTestApp, later, type TestApp } from '../../../test/helpers.js';
import type { LocalLogoStorage } from '../../plugins/storage/local.js';
import { logoObjectKeyFromUrl } from '../../plugins/storage/storage.js';
import { jpegWithExif, makePng, pngWithExif, TINY_JPEG, withJpegSegment } from '../../../test/fixtures/images.js';
import { checkLogoUrl } from './logos.service.js';
import { seedApplication, seedOwner } from '../../../test/fixtures/logos.js';

let t: TestApp;
let token: string;
let appId: string;
let otherAppId: string;
const auth = () => ({ authorization: `Bearer ${token}` });
const config = { uploadBaseUrl: 'http://localhost:3000/api/uploads', cdnBaseUrl: 'http://localhost:3000/cdn' };

async function uploadUrl(contentType: string, id = appId): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${id}/logo`, headers: auth(), payload: { contentType } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().uploadUrl;
}
function put(url: string, body: Buffer | string, contentType: string) {
  const u = new URL(url);
  return t.app.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': contentType }, payload: body });
}

beforeAll(async () => {
  t = await createTestApp({ UPLOAD_URL_TTL_SECONDS: '2' });
  const owner = await seedOwner(t);
  token = owner.token;
  appId = await seedApplication(t, owner.userId);
  otherAppId = await seedApplication(t, (await seedOwner(t)).userId);
});
afterAll(() => t?.close());

describe('POST /platform/application/:id/logo', () => {
  it('answers an upload URL under the upload base and the application prefix', async () => {
    const url = await uploadUrl('image/png');
    expect(url).toMatch(new RegExp(`^http://localhost:3000/api/uploads/logos/${appId}/[0-9a-f]{32}\\.png\\?expires=\\d+&sig=`));
    expect((await t.app.inject({ url: '/api/config' })).json()).toMatchObject(config);
  });

  it('refuses other types with the spec message', async () => {
    for (const contentType of ['image/svg+xml', 'text/html', 'image/gif', '']) {
      const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/logo`, headers: auth(), payload: { contentType } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(messages.logoWrongType);
    }
  });

  it('is for owners only', async () => {
    expect((await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/logo`, payload: { contentType: 'image/png' } })).statusCode).toBe(401);
    const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${otherAppId}/logo`, headers: auth(), payload: { contentType: 'image/png' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 404, message: apiErrors.applicationNotFound });
  });
});

describe('PUT /uploads/logos/… and GET /cdn/logos/… (local driver)', () => {
  it('stores a real PNG and serves it inert with long caching', async () => {
    const url = await uploadUrl('image/png');
    const png = makePng(30, 12);
    const res = await put(url, png, 'image/png');
    expect(res.statusCode, res.body).toBe(200);
    const logoUrl = deriveLogoUrl(url, config);
    await expect(checkLogoUrl(t.app.storage, appId, logoUrl)).resolves.toBeUndefined();
    const served = await t.app.inject({ url: new URL(logoUrl).pathname });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(served.headers['content-security-policy']).toContain("default-src 'none'");
    // What is served is a fresh encoding of the same pixels, not the bytes sent.
    expect(await sharp(served.rawPayload).metadata()).toMatchObject({ format: 'png', width: 30, height: 12 });
  });

  it('stores a JPEG re-encoded, upright and without EXIF or GPS (read back from storage)', async () => {
    const url = await uploadUrl('image/jpeg');
    const input = await jpegWithExif(40, 20);
    expect((await sharp(input).metadata()).exif).toBeDefined();
    expect((await put(url, input, 'image/jpeg')).statusCode).toBe(200);
    const objectKey = logoObjectKeyFromUrl(deriveLogoUrl(url, config), t.app.storage.cdnBaseUrl, appId)!;
    const stored = await (t.app.storage as LocalLogoStorage).get(objectKey);
    const metadata = await sharp(stored!.bytes).metadata();
    expect(metadata).toMatchObject({ format: 'jpeg', width: 20, height: 40 });
    expect(metadata.exif).toBeUndefined();
    expect(stored!.bytes.includes(Buffer.from('SpyCam'))).toBe(false);
  });

  it('stores a PNG without its EXIF or text chunks, scaled down to the cap', async () => {
    const url = await uploadUrl('image/png');
    expect((await put(url, await pngWithExif(), 'image/png')).statusCode).toBe(200);
    const objectKey = logoObjectKeyFromUrl(deriveLogoUrl(url, config), t.app.storage.cdnBaseUrl, appId)!;
    const stored = await (t.app.storage as LocalLogoStorage).get(objectKey);
    expect((await sharp(stored!.bytes).metadata()).exif).toBeUndefined();
    expect(stored!.bytes.includes(Buffer.from('taken at home'))).toBe(false);
    const wide = await uploadUrl('image/png');
    expect((await put(wide, makePng(2048, 100), 'image/png')).statusCode).toBe(200);
    const wideKey = logoObjectKeyFromUrl(deriveLogoUrl(wide, config), t.app.storage.cdnBaseUrl, appId)!;
    const storedWide = await (t.app.storage as LocalLogoStorage).get(wideKey);
    expect(await sharp(storedWide!.bytes).metadata()).toMatchObject({ width: LOGO_MAX_DIMENSION_PX, height: 50 });
  });

  it('stores a real JPEG', async () => {
    const url = await uploadUrl('image/jpeg');
    expect((await put(url, TINY_JPEG, 'image/jpeg')).statusCode).toBe(200);
    const served = await t.app.inject({ url: new URL(deriveLogoUrl(url, config)).pathname });
    expect(served.headers['content-type']).toBe('image/jpeg');
  });

  it('refuses 1 MB or more with the spec message, by header or by counted bytes', async () => {
    const big = Buffer.concat([makePng(), Buffer.alloc(1024 * 1024)]);
    const res = await put(await uploadUrl('image/png'), big, 'image/png');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: 413, message: apiErrors.uploadTooBig });
    const huge = await put(await uploadUrl('image/png'), Buffer.alloc(3 * 1024 * 1024), 'image/png');
    expect(huge.statusCode).toBe(413);
    expect(huge.json().message).toBe(apiErrors.uploadTooBig);
  });

  it('refuses bytes that are not a clean image, or not the declared type', async () => {
    const cases: [Buffer, string, number, string][] = [
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'image/png', 400, apiErrors.uploadNotImage],
      [Buffer.concat([makePng(), Buffer.from('<html><script>alert(1)</script></html>')]), 'image/png', 400, apiErrors.uploadNotImage],
      [Buffer.concat([makePng().subarray(0, 8), Buffer.from('<script>alert(1)</script>')]), 'image/png', 400, apiErrors.uploadNotImage],
      [TINY_JPEG, 'image/png', 415, apiErrors.uploadTypeMismatch],
      [makePng(), 'image/jpeg', 415, apiErrors.uploadTypeMismatch],
      [Buffer.alloc(0), 'image/png', 400, apiErrors.uploadNotImage],
      [withJpegSegment(TINY_JPEG, 0xfe, Buffer.from('<svg onload=alert(1)>')), 'image/jpeg', 400, apiErrors.uploadNotImage],
      [TINY_JPEG.subarray(0, TINY_JPEG.length - 30), 'image/jpeg', 400, apiErrors.uploadNotImage],
      [makePng(5001, 5000), 'image/png', 400, apiErrors.uploadTooManyPixels],
    ];
    for (const [bytes, type, status, message] of cases) {
      const res = await put(await uploadUrl(type), bytes, type);
      expect(res.statusCode, message).toBe(status);
      expect(res.json()).toEqual({ code: status, message });
    }
  });

  it('refuses a declared type other than the signed one before reading the body', async () => {
    const url = await uploadUrl('image/jpeg');
    const asPng = await put(url, makePng(), 'image/png');
    expect(asPng.statusCode).toBe(415);
    expect(asPng.json().message).toBe(apiErrors.uploadTypeNotSigned);
    for (const type of ['image/svg+xml', 'text/html', 'application/json']) {
      const res = await put(url, '{}', type);
      expect(res.statusCode).toBe(415);
    }
  });

  it('refuses tampered, retargeted and expired URLs', async () => {
    const url = new URL(await uploadUrl('image/png'));
    const sig = url.searchParams.get('sig')!;
    const tampered = new URL(url);
    tampered.searchParams.set('sig', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    const retargeted = new URL(url);
    retargeted.pathname = retargeted.pathname.replace(appId, otherAppId);
    const renamed = new URL(url);
    renamed.pathname = renamed.pathname.replace(/[0-9a-f]{32}/, '0'.repeat(32));
    const noSig = new URL(url);
    noSig.searchParams.delete('sig');
    for (const bad of [tampered, retargeted, renamed, noSig]) {
      const res = await put(bad.toString(), makePng(), 'image/png');
      expect(res.statusCode, bad.toString()).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    expect((await put(tampered.toString(), makePng(), 'image/png')).json()).toEqual({ code: 403, message: apiErrors.uploadUrlInvalid });
    const expired = await later(2100, () => put(url.toString(), makePng(), 'image/png'));
    expect(expired.statusCode).toBe(403);
    expect(expired.json().message).toBe(apiErrors.uploadUrlInvalid);
  });

  it('refuses traversal on upload and CDN paths, and never falls back to the portal page', async () => {
    const url = new URL(await uploadUrl('image/png'));
    for (const evil of ['/../../../etc/passwd', '/..%2f..%2fjwt-signing-key.pem', '/%2e%2e/%2e%2e/x.png', `/${'a'.repeat(32)}.png/../x.png`]) {
      const res = await t.app.inject({ method: 'PUT', url: `/api/uploads/logos/${appId}${evil}${url.search}`, headers: { 'content-type': 'image/png' }, payload: makePng() });
      expect(res.statusCode, evil).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    // Resolved by the URL parser to /jwt-signing-key.pem, outside /cdn: whatever answers, never the key.
    const resolved = await t.app.inject({ url: '/cdn/logos/../../jwt-signing-key.pem' });
    expect(resolved.body).not.toContain('PRIVATE KEY');
    for (const evil of ['/cdn/logos/..%2f..%2fjwt-signing-key.pem', '/cdn/..%2fjwt-signing-key.pem', '/cdn/upload-signing-secret', `/cdn/logos/${appId}/${'0'.repeat(32)}.png`]) {
      const res = await t.app.inject({ url: evil });
      expect(res.statusCode, evil).toBe(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json()).toEqual({ code: 404, message: apiErrors.notFound });
    }
  });

  it('checkLogoUrl accepts only an uploaded object under the CDN base and the own prefix', async () => {
    const url = await uploadUrl('image/png');
    expect((await put(url, makePng(), 'image/png')).statusCode).toBe(200);
    const logoUrl = deriveLogoUrl(url, config);
    await expect(checkLogoUrl(t.app.storage, appId, logoUrl)).resolves.toBeUndefined();
    for (const bad of [
      'https://evil.example.com/logo.png',
      logoUrl.replace(appId, otherAppId),
      logoUrl.replace(`/logos/${appId}/`, `/logos/${appId}/../${otherAppId}/`),
      logoUrl.replace(/[0-9a-f]{32}/, '0'.repeat(32)), // never uploaded
      `${logoUrl}?x=1`,
      'javascript:alert(1)',
    ]) {
      await expect(checkLogoUrl(t.app.storage, appId, bad), bad).rejects.toMatchObject({ statusCode: 400, message: apiErrors.logoUrlNotAllowed });
    }
    await expect(checkLogoUrl(t.app.storage, otherAppId, logoUrl)).rejects.toMatchObject({ statusCode: 400 });
  });
});
