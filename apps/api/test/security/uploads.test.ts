import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors, deriveLogoUrl, messages } from '@latchkey/contract';
import { createTestApp, later, uniqueEmail, type TestApp } from '../helpers.js';
import { makePng } from '../scale/png.js';

/** Every hostile upload is refused with the contract's status and message; served logos cannot run. */
let t: TestApp;
let token: string;
let appId: string;
let otherAppId: string;
const auth = () => ({ authorization: `Bearer ${token}` });

async function uploadUrl(contentType: string, id = appId) {
  const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${id}/logo`, headers: auth(), payload: { contentType } });
  expect(res.statusCode).toBe(200);
  return res.json().uploadUrl as string;
}
function put(url: string, body: Buffer | string, contentType: string) {
  const u = new URL(url);
  return t.app.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': contentType }, payload: body });
}
/** The refusal the contract names for the case: its exact status and message. */
function expectRefused(res: { statusCode: number; body: string; json: () => unknown }, status: number, message: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual({ code: status, message });
}

beforeAll(async () => {
  t = await createTestApp({ UPLOAD_URL_TTL_SECONDS: '2' });
  const reg = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('upl'), password: 'upload-pass' } });
  token = reg.json().authToken;
  const mk = async (name: string) =>
    (await t.app.inject({ method: 'POST', url: '/api/platform/application', headers: auth(), payload: { name, companyName: 'C', mailingAddress: 'A' } }))
      .headers.location!.toString().split('/').pop()!;
  appId = await mk('Uploads');
  otherAppId = await mk('Other');
});
afterAll(() => t?.close());

describe('logo uploads', () => {
  it('accepts a real PNG and serves it inert', async () => {
    const url = await uploadUrl('image/png');
    const png = makePng(20, 10);
    expect((await put(url, png, 'image/png')).statusCode).toBe(200);
    const config = (await t.app.inject({ url: '/api/config' })).json();
    const logoUrl = deriveLogoUrl(url, config);
    const save = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}`, headers: auth(), payload: { logoUrl } });
    expect(save.statusCode).toBe(204);
    const served = await t.app.inject({ url: new URL(logoUrl).pathname });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(String(served.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(String(served.headers['cache-control'])).toContain('max-age=');
    // What is served is the upload decoded and written afresh (sharp): the same picture, a clean PNG.
    const stored = await sharp(served.rawPayload).metadata();
    expect([stored.format, stored.width, stored.height]).toEqual(['png', 20, 10]);
  });

  it('refuses SVG before any URL is handed out', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/logo`, headers: auth(), payload: { contentType: 'image/svg+xml' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(messages.logoWrongType);
  });

  it.each([
    ['SVG bytes', () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>')],
    ['an HTML/PNG polyglot', () => Buffer.concat([makePng(), Buffer.from('<html><script>alert(1)</script></html>')])],
    ['PNG magic bytes followed by script', () => Buffer.concat([makePng().subarray(0, 8), Buffer.from('<script>alert(1)</script>')])],
    ['a JPEG sent as PNG', () => Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9])],
  ])('refuses %s', async (_label, bytes) => {
    const res = await put(await uploadUrl('image/png'), bytes(), 'image/png');
    expectRefused(res, 400, apiErrors.uploadNotImage);
  });

  it('refuses a file of 1 MB or more', async () => {
    const big = Buffer.concat([makePng(), Buffer.alloc(1024 * 1024)]);
    const res = await put(await uploadUrl('image/png'), big, 'image/png');
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toBe(apiErrors.uploadTooBig);
  });

  it('refuses a declared type that differs from the signed one or from the bytes', async () => {
    expectRefused(await put(await uploadUrl('image/jpeg'), makePng(), 'image/png'), 415, apiErrors.uploadTypeNotSigned);
    expectRefused(await put(await uploadUrl('image/jpeg'), makePng(), 'image/jpeg'), 415, apiErrors.uploadTypeMismatch);
  });

  it('refuses tampered and expired upload URLs', async () => {
    const url = new URL(await uploadUrl('image/png'));
    const sig = url.searchParams.get('sig') ?? url.searchParams.get('signature') ?? '';
    expect(sig).not.toBe('');
    const tampered = new URL(url);
    for (const [k, v] of url.searchParams) if (v === sig) tampered.searchParams.set(k, (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    expectRefused(await put(tampered.toString(), makePng(), 'image/png'), 403, apiErrors.uploadUrlInvalid);
    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace(appId, otherAppId);
    expectRefused(await put(otherKey.toString(), makePng(), 'image/png'), 403, apiErrors.uploadUrlInvalid);
    const expired = await later(3100, () => put(url.toString(), makePng(), 'image/png'));
    expectRefused(expired, 403, apiErrors.uploadUrlInvalid);
  });

  it('refuses path traversal in object keys', async () => {
    const url = new URL(await uploadUrl('image/png'));
    // Dot segments are resolved before routing, so these leave the upload route (a plain 404); an encoded
    // slash stays in the key, which then matches no signature.
    for (const [evil, status, message] of [
      ['/../../../etc/passwd', 404, apiErrors.notFound],
      ['/..%2f..%2fjwt-signing-key.pem', 403, apiErrors.uploadUrlInvalid],
      ['/%2e%2e/%2e%2e/x.png', 404, apiErrors.notFound],
    ] as const) {
      const res = await t.app.inject({ method: 'PUT', url: `/api/uploads/logos/${appId}${evil}${url.search}`, headers: { 'content-type': 'image/png' }, payload: makePng() });
      expectRefused(res, status, message);
    }
    for (const evil of ['/cdn/logos/../../jwt-signing-key.pem', '/cdn/logos/..%2f..%2fjwt-signing-key.pem', '/cdn/..%2fjwt-signing-key.pem']) {
      const res = await t.app.inject({ url: evil });
      expectRefused(res, 404, apiErrors.notFound);
      expect(res.body).not.toContain('PRIVATE KEY');
    }
  });

  it('accepts a logoUrl only under the CDN base and the application own prefix', async () => {
    const config = (await t.app.inject({ url: '/api/config' })).json();
    for (const logoUrl of [
      'https://evil.example.com/logo.png',
      `${config.cdnBaseUrl}/logos/${otherAppId}/x.png`,
      `${config.cdnBaseUrl}/logos/${appId}/../${otherAppId}/x.png`,
      `javascript:alert(1)`,
    ]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}`, headers: auth(), payload: { logoUrl } });
      expect(res.statusCode, logoUrl).toBe(400);
    }
  });
});
