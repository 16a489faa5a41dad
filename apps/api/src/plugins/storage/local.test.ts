import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { deriveLogoUrl } from '@latchkey/contract';
import { createDatabase } from '../../db/client.js';
import { SecretBox } from '../../lib/secret-box.js';
import { LocalLogoStorage, loadUploadSecret } from './local.js';
import { logoObjectKeyFromUrl, newObjectKey, parseObjectKey } from './storage.js';
import { makePng, TINY_JPEG } from '../../../test/fixtures/images.js';

const APP = '3f2b8c1e-5d4a-4c3b-9a8f-1e2d3c4b5a69';
const OTHER = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const dirs: string[] = [];
let clock = Date.UTC(2030, 0, 1);

function storage(secret = 'a'.repeat(40)) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-storage-'));
  dirs.push(dataDir);
  return new LocalLogoStorage({ publicUrl: 'http://localhost:3000', apiPrefix: '/api', cdnBaseUrl: 'http://localhost:3000/cdn', dataDir, secret, ttlSeconds: 300, now: () => clock });
}
/** What the PUT route sees: the key from the path, the query, the declared type. */
function split(uploadUrl: string) {
  const url = new URL(uploadUrl);
  const objectKey = url.pathname.replace(/^\/api\/uploads\//, '');
  return { objectKey, query: Object.fromEntries(url.searchParams) as Record<string, string> };
}

beforeEach(() => {
  clock = Date.UTC(2030, 0, 1);
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('local logo storage: upload URLs', () => {
  it('hands out a URL under the upload base and the application prefix, which the portal maps to the CDN', async () => {
    const s = storage();
    const target = await s.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    expect(target.uploadUrl).toMatch(new RegExp(`^http://localhost:3000/api/uploads/logos/${APP}/[0-9a-f]{32}\\.png\\?expires=\\d+&sig=[\\w-]+$`));
    expect(target.expiresAt.getTime()).toBe(clock + 300_000);
    const logoUrl = deriveLogoUrl(target.uploadUrl, s);
    expect(logoUrl).toBe(`http://localhost:3000/cdn/${target.objectKey}`);
    expect(logoObjectKeyFromUrl(logoUrl, s.cdnBaseUrl, APP)).toBe(target.objectKey);
    const jpeg = await s.createUploadUrl({ applicationId: APP, contentType: 'image/jpeg' });
    expect(jpeg.objectKey).toMatch(/\.jpg$/);
  });

  it('accepts its own signature with the signed content type', async () => {
    const s = storage();
    const { objectKey, query } = split((await s.createUploadUrl({ applicationId: APP, contentType: 'image/png' })).uploadUrl);
    expect(s.verifyUpload(objectKey, query, 'image/png')).toEqual({ ok: true, contentType: 'image/png' });
  });

  it('refuses a tampered signature, expiry or key', async () => {
    const s = storage();
    const { objectKey, query } = split((await s.createUploadUrl({ applicationId: APP, contentType: 'image/png' })).uploadUrl);
    const flipped = (query.sig![0] === 'A' ? 'B' : 'A') + query.sig!.slice(1);
    expect(s.verifyUpload(objectKey, { ...query, sig: flipped }, 'image/png')).toEqual({ ok: false, reason: 'invalid' });
    expect(s.verifyUpload(objectKey, { ...query, sig: query.sig!.slice(1) }, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey, { ...query, sig: '' }, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey, { expires: query.expires }, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey, { ...query, expires: String(Number(query.expires) + 3600) }, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey.replace(APP, OTHER), query, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey.replace(/[0-9a-f]{32}/, 'f'.repeat(32)), query, 'image/png').ok).toBe(false);
    expect(s.verifyUpload(objectKey, { ...query, sig: [query.sig] as unknown as string }, 'image/png').ok).toBe(false);
  });

  it('refuses a signature made with another secret', async () => {
    const a = storage('a'.repeat(40));
    const b = storage('b'.repeat(40));
    const { objectKey, query } = split((await a.createUploadUrl({ applicationId: APP, contentType: 'image/png' })).uploadUrl);
    expect(b.verifyUpload(objectKey, query, 'image/png').ok).toBe(false);
  });

  it('binds the content type', async () => {
    const s = storage();
    const { objectKey, query } = split((await s.createUploadUrl({ applicationId: APP, contentType: 'image/png' })).uploadUrl);
    expect(s.verifyUpload(objectKey, query, 'image/jpeg').ok).toBe(false);
    expect(s.verifyUpload(objectKey, query, 'image/svg+xml').ok).toBe(false);
    expect(s.verifyUpload(objectKey, query, undefined).ok).toBe(false);
    // Renaming the key to the other extension breaks the signature too.
    expect(s.verifyUpload(objectKey.replace(/\.png$/, '.jpg'), query, 'image/jpeg').ok).toBe(false);
  });

  it('expires', async () => {
    const s = storage();
    const { objectKey, query } = split((await s.createUploadUrl({ applicationId: APP, contentType: 'image/png' })).uploadUrl);
    clock += 299_000;
    expect(s.verifyUpload(objectKey, query, 'image/png').ok).toBe(true);
    clock += 1_000;
    expect(s.verifyUpload(objectKey, query, 'image/png')).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses a short secret', () => {
    expect(() => storage('short')).toThrow(/32/);
  });
});

describe('local logo storage: object keys and files', () => {
  it.each([
    '../../../etc/passwd',
    `logos/${APP}/../../jwt-signing-key.pem`,
    `logos/${APP}/..%2f..%2fx.png`,
    `logos/${APP}/${'a'.repeat(32)}.svg`,
    `logos/${APP}/${'a'.repeat(32)}.png/../x.png`,
    `logos/${APP.toUpperCase()}/${'a'.repeat(32)}.png`,
    `/logos/${APP}/${'a'.repeat(32)}.png`,
    `logos/${APP}/${'a'.repeat(32)}.png\0.html`,
    `logos/not-a-uuid/${'a'.repeat(32)}.png`,
  ])('refuses the key %s', async (key) => {
    const s = storage();
    expect(parseObjectKey(key)).toBeNull();
    expect(s.verifyUpload(key, { expires: '9999999999', sig: 'x' }, 'image/png').ok).toBe(false);
    expect(await s.get(key)).toBeNull();
    await expect(s.put(key, makePng())).rejects.toThrow();
  });

  it('writes atomically and reads back', async () => {
    const s = storage();
    const key = newObjectKey(APP, 'image/png');
    await s.put(key, makePng());
    expect((await s.get(key))?.bytes.equals(makePng())).toBe(true);
    expect((await s.get(key))?.contentType).toBe('image/png');
    expect(fs.readdirSync(path.join(s.root, 'logos', APP))).toEqual([key.split('/').pop()]);
    await s.put(key, makePng(8, 8));
    expect((await s.get(key))?.bytes.equals(makePng(8, 8))).toBe(true);
    expect(await s.verifyObject(key)).toBe(true);
    await s.deleteObject(key);
    expect(await s.get(key)).toBeNull();
    expect(await s.verifyObject(key)).toBe(false);
  });

  it('verifyObject refuses an object whose bytes are not its type', async () => {
    const s = storage();
    const key = newObjectKey(APP, 'image/png');
    await s.put(key, TINY_JPEG);
    expect(await s.verifyObject(key)).toBe(false);
  });
});

describe('logoObjectKeyFromUrl', () => {
  const cdn = 'https://cdn.example.com/assets';
  const key = `logos/${APP}/${'0'.repeat(32)}.png`;
  it('accepts a URL under the CDN base and the application prefix', () => {
    expect(logoObjectKeyFromUrl(`${cdn}/${key}`, cdn, APP)).toBe(key);
    expect(logoObjectKeyFromUrl(`${cdn}/${key}`, `${cdn}/`, APP.toUpperCase())).toBe(key);
  });
  it.each([
    `https://evil.example.com/${key}`,
    `https://cdn.example.com.evil.example/assets/${key}`,
    `https://cdn.example.com/assetsX/${key}`,
    `${cdn}/logos/${OTHER}/${'0'.repeat(32)}.png`,
    `${cdn}/logos/${APP}/../${OTHER}/${'0'.repeat(32)}.png`,
    `${cdn}/logos/${APP}/%2e%2e/${'0'.repeat(32)}.png`,
    `${cdn}/${key}?x=1`,
    `${cdn}/${key}#frag`,
    `${cdn}/${key}/`,
    `javascript:alert(1)//${cdn}/${key}`,
    `${cdn}/logos/${APP}/x.png`,
  ])('refuses %s', (url) => {
    expect(logoObjectKeyFromUrl(url, cdn, APP)).toBeNull();
  });
});

describe('loadUploadSecret', () => {
  it('uses the configured secret, or one created once in the database, taking over an older data-directory file', async () => {
    const database = await createDatabase({});
    await database.migrate();
    const box = new SecretBox(undefined);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-secret-'));
    dirs.push(dir);
    expect(await loadUploadSecret(database.db, box, dir, 'c'.repeat(40))).toBe('c'.repeat(40));
    fs.writeFileSync(path.join(dir, 'upload-signing-secret'), 'l'.repeat(40));
    expect(await loadUploadSecret(database.db, box, dir, undefined)).toBe('l'.repeat(40));
    // Another instance with its own (empty) data directory gets the same secret from the database.
    const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-secret-'));
    dirs.push(otherDir);
    expect(await loadUploadSecret(database.db, box, otherDir, undefined)).toBe('l'.repeat(40));
    await database.close();
  });
});
