import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveLogoUrl } from '@latchkey/contract';
import { S3LogoStorage, s3BaseUrl } from './s3.js';
import { startSigV4Proxy } from '../../../test/fixtures/sigv4-proxy.js';
import { logoObjectKeyFromUrl } from './storage.js';
import { jpegWithExif, makePng, TINY_JPEG, withJpegSegment } from '../../../test/fixtures/images.js';

/**
 * The S3 driver against a real S3 implementation (s3rver) on a random port and a temp directory, behind
 * a proxy that checks presigned SigV4 signatures as S3 does (s3rver itself does not).
 */
const APP = '3f2b8c1e-5d4a-4c3b-9a8f-1e2d3c4b5a69';
const BUCKET = 'logos-test';
let server: S3rver;
let directory: string;
let storage: S3LogoStorage;
let proxy: Awaited<ReturnType<typeof startSigV4Proxy>>;

beforeAll(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-s3rver-'));
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const { port } = await server.run();
  proxy = await startSigV4Proxy(`http://127.0.0.1:${port}`, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
  storage = new S3LogoStorage({
    bucket: BUCKET,
    region: 'us-east-1',
    endpoint: proxy.endpoint,
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    cdnBaseUrl: 'https://cdn.example.com',
    ttlSeconds: 60,
  });
});
afterAll(async () => {
  storage?.close();
  await proxy?.close();
  await server?.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

const put = (url: string, body: Buffer, contentType: string) => fetch(url, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': contentType } });
const objectExists = (key: string) => fs.existsSync(path.join(directory, BUCKET, `${key}._S3rver_object`));

describe('S3 logo storage', () => {
  it('hands out a presigned PUT that works with a plain fetch, and the object verifies', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    expect(target.uploadUrl.startsWith(`${storage.uploadBaseUrl}/logos/${APP}/`)).toBe(true);
    const url = new URL(target.uploadUrl);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toContain('content-type');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect([...url.searchParams.keys()].some((k) => /checksum/i.test(k))).toBe(false);
    const res = await put(target.uploadUrl, makePng(), 'image/png');
    expect(res.status).toBe(200);
    expect(await storage.verifyObject(target.objectKey)).toBe(true);
    const logoUrl = deriveLogoUrl(target.uploadUrl, storage);
    expect(logoUrl).toBe(`https://cdn.example.com/${target.objectKey}`);
    expect(logoObjectKeyFromUrl(logoUrl, storage.cdnBaseUrl, APP)).toBe(target.objectKey);
  });

  it('replaces a good object by its clean re-encoding: the stored JPEG has no EXIF or GPS', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/jpeg' });
    const input = await jpegWithExif(40, 20);
    expect((await put(target.uploadUrl, input, 'image/jpeg')).status).toBe(200);
    expect(await storage.verifyObject(target.objectKey)).toBe(true);
    const object = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: target.objectKey }));
    const stored = Buffer.from(await object.Body!.transformToByteArray());
    expect(object.ContentType).toBe('image/jpeg');
    const metadata = await sharp(stored).metadata();
    expect(metadata).toMatchObject({ format: 'jpeg', width: 20, height: 40 });
    expect(metadata.exif).toBeUndefined();
    expect(stored.includes(Buffer.from('SpyCam'))).toBe(false);
    // Verifying again (the same logoUrl saved again) finds the clean object good and leaves it as it is:
    // no second re-encoding, so a JPEG loses nothing on every save.
    expect(await storage.verifyObject(target.objectKey)).toBe(true);
    const again = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: target.objectKey }));
    expect(Buffer.from(await again.Body!.transformToByteArray()).equals(stored)).toBe(true);
    // A PUT through the same upload URL (still valid) replaces the clean object: the marker no longer
    // matches the bytes, so they are checked and cleaned afresh.
    expect((await put(target.uploadUrl, input, 'image/jpeg')).status).toBe(200);
    expect(await storage.verifyObject(target.objectKey)).toBe(true);
    const recleaned = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: target.objectKey }));
    expect((await sharp(Buffer.from(await recleaned.Body!.transformToByteArray())).metadata()).exif).toBeUndefined();
  });

  it('works for JPEG too', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/jpeg' });
    expect((await put(target.uploadUrl, TINY_JPEG, 'image/jpeg')).status).toBe(200);
    expect(await storage.verifyObject(target.objectKey)).toBe(true);
  });

  it('lets S3 refuse a PUT with another content type (the signature binds it)', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    const res = await put(target.uploadUrl, Buffer.from('<svg onload="alert(1)"/>'), 'image/svg+xml');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('SignatureDoesNotMatch');
    expect(objectExists(target.objectKey)).toBe(false);
    expect(await storage.verifyObject(target.objectKey)).toBe(false);
  });

  it('lets S3 refuse a PUT to a different key with the same signature', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    const other = target.uploadUrl.replace(/[0-9a-f]{32}\.png/, `${'e'.repeat(32)}.png`);
    expect((await put(other, makePng(), 'image/png')).status).toBe(403);
  });

  it('lets S3 refuse an expired URL', async () => {
    const short = new S3LogoStorage({ bucket: BUCKET, region: 'us-east-1', endpoint: proxy.endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', cdnBaseUrl: 'https://cdn.example.com', ttlSeconds: 1 });
    const target = await short.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    await new Promise((r) => setTimeout(r, 1100));
    const res = await put(target.uploadUrl, makePng(), 'image/png');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('AccessDenied');
    short.close();
  });

  it('verifyObject deletes an object whose bytes are not a clean image of its type', async () => {
    for (const [contentType, body] of [
      ['image/png', Buffer.concat([makePng(), Buffer.from('<html><script>alert(1)</script></html>')])],
      ['image/png', TINY_JPEG],
      ['image/jpeg', Buffer.from('<svg onload="alert(1)"/>')],
      ['image/jpeg', withJpegSegment(TINY_JPEG, 0xfe, Buffer.from('<svg onload=alert(1)>'))],
      ['image/jpeg', TINY_JPEG.subarray(0, TINY_JPEG.length - 30)],
    ] as const) {
      const target = await storage.createUploadUrl({ applicationId: APP, contentType });
      expect((await put(target.uploadUrl, body, contentType)).status).toBe(200);
      expect(objectExists(target.objectKey)).toBe(true);
      expect(await storage.verifyObject(target.objectKey)).toBe(false);
      expect(objectExists(target.objectKey)).toBe(false);
    }
  });

  it('verifyObject deletes an object of 1 MB or more', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    expect((await put(target.uploadUrl, Buffer.concat([makePng(), Buffer.alloc(1024 * 1024)]), 'image/png')).status).toBe(200);
    expect(await storage.verifyObject(target.objectKey)).toBe(false);
    expect(objectExists(target.objectKey)).toBe(false);
  });

  it('verifyObject deletes an object stored with a content type other than its key', async () => {
    const target = await storage.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    await storage.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: target.objectKey, Body: makePng(), ContentType: 'text/html' }));
    expect(await storage.verifyObject(target.objectKey)).toBe(false);
    expect(objectExists(target.objectKey)).toBe(false);
  });

  it('verifyObject answers false for a missing object or a foreign key', async () => {
    expect(await storage.verifyObject(`logos/${APP}/${'0'.repeat(32)}.png`)).toBe(false);
    expect(await storage.verifyObject('../secret')).toBe(false);
  });
});

describe('s3BaseUrl', () => {
  it('matches the URLs the SDK presigns', () => {
    expect(s3BaseUrl({ bucket: 'b', region: 'eu-west-1', endpoint: 'http://minio:9000/', forcePathStyle: true })).toBe('http://minio:9000/b');
    expect(s3BaseUrl({ bucket: 'b', region: 'eu-west-1', endpoint: 'https://r2.example.com', forcePathStyle: false })).toBe('https://b.r2.example.com');
    expect(s3BaseUrl({ bucket: 'b', region: 'eu-west-1' })).toBe('https://b.s3.eu-west-1.amazonaws.com');
  });

  it('is the prefix of a presigned URL without an endpoint (AWS, virtual-hosted)', async () => {
    const aws = new S3LogoStorage({ bucket: 'my-logos', region: 'eu-west-1', accessKeyId: 'AKIA', secretAccessKey: 'x', cdnBaseUrl: 'https://cdn.example.com', ttlSeconds: 60 });
    const target = await aws.createUploadUrl({ applicationId: APP, contentType: 'image/png' });
    expect(target.uploadUrl.startsWith(`${aws.uploadBaseUrl}/logos/`)).toBe(true);
    aws.close();
  });
});
