import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LogoContentType } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { loadOrCreateSharedSecret } from '../../lib/server-secrets.js';
import { storedLogoType } from './image.js';
import { newObjectKey, parseObjectKey, type LogoStorage, type UploadTarget } from './storage.js';

export interface LocalStorageOptions {
  /** Public origin of the service, e.g. http://localhost:3000. */
  publicUrl: string;
  /** Where the API is mounted (/api): upload URLs are `${publicUrl}${apiPrefix}/uploads/logos/…`. */
  apiPrefix: string;
  /** `${publicUrl}/cdn` unless a CDN sits in front. */
  cdnBaseUrl: string;
  dataDir: string;
  /** HMAC key for upload URLs (≥ 32 chars); see loadUploadSecret. */
  secret: string;
  ttlSeconds: number;
  now?: () => number;
}

export type UploadCheck = { ok: true; contentType: LogoContentType } | { ok: false; reason: 'invalid' | 'expired' };

/**
 * Embedded mode: the service is the upload host and the CDN. An upload URL carries an expiry and an
 * HMAC over method, object key, content type and expiry, so it is good for one object of one type,
 * under one application's prefix, for a few minutes.
 */
export class LocalLogoStorage implements LogoStorage {
  readonly driver = 'local' as const;
  readonly uploadBaseUrl: string;
  readonly cdnBaseUrl: string;
  readonly root: string;
  readonly #secret: Buffer;
  readonly #ttl: number;
  readonly #now: () => number;

  constructor(options: LocalStorageOptions) {
    if (options.secret.length < 32) throw new Error('The upload signing secret must be at least 32 characters');
    this.uploadBaseUrl = `${options.publicUrl.replace(/\/+$/, '')}${options.apiPrefix}/uploads`;
    this.cdnBaseUrl = options.cdnBaseUrl.replace(/\/+$/, '');
    this.root = path.resolve(options.dataDir, 'uploads');
    this.#secret = Buffer.from(options.secret, 'utf8');
    this.#ttl = options.ttlSeconds;
    this.#now = options.now ?? (() => Date.now());
  }

  async createUploadUrl({ applicationId, contentType }: { applicationId: string; contentType: LogoContentType }): Promise<UploadTarget> {
    const objectKey = newObjectKey(applicationId, contentType);
    const expires = Math.floor(this.#now() / 1000) + this.#ttl;
    const query = new URLSearchParams({ expires: String(expires), sig: this.#sign(objectKey, contentType, expires) });
    return { uploadUrl: `${this.uploadBaseUrl}/${objectKey}?${query}`, objectKey, expiresAt: new Date(expires * 1000) };
  }

  /**
   * Checks an incoming PUT: a key of ours, a signature over exactly this key and declared content type,
   * not expired. The content type comes from the request header; the key's extension must agree.
   */
  verifyUpload(objectKey: string, query: { expires?: unknown; sig?: unknown }, contentType: string | undefined): UploadCheck {
    const parsed = parseObjectKey(objectKey);
    if (!parsed || typeof query.expires !== 'string' || typeof query.sig !== 'string') return { ok: false, reason: 'invalid' };
    if (!/^\d{1,12}$/.test(query.expires) || contentType !== parsed.contentType) return { ok: false, reason: 'invalid' };
    const expires = Number(query.expires);
    const expected = Buffer.from(this.#sign(objectKey, parsed.contentType, expires), 'utf8');
    const given = Buffer.from(query.sig, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
    if (expires * 1000 <= this.#now()) return { ok: false, reason: 'expired' };
    return { ok: true, contentType: parsed.contentType };
  }

  /** Writes atomically: a temp file beside the target, then rename, so a reader never sees half a logo. */
  async put(objectKey: string, bytes: Uint8Array): Promise<void> {
    const file = this.#fileFor(objectKey);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await fs.writeFile(temp, bytes, { flag: 'wx', mode: 0o644 });
      await fs.rename(temp, file);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  async get(objectKey: string): Promise<{ bytes: Buffer; contentType: LogoContentType } | null> {
    const parsed = parseObjectKey(objectKey);
    if (!parsed) return null;
    try {
      return { bytes: await fs.readFile(this.#fileFor(objectKey)), contentType: parsed.contentType };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** The bytes were re-encoded when they arrived; here the object only has to exist and still decode as its type. */
  async verifyObject(objectKey: string): Promise<boolean> {
    const object = await this.get(objectKey);
    return object !== null && (await storedLogoType(object.bytes)) === object.contentType;
  }

  async deleteObject(objectKey: string): Promise<void> {
    if (!parseObjectKey(objectKey)) return;
    await fs.rm(this.#fileFor(objectKey), { force: true });
  }

  #sign(objectKey: string, contentType: string, expires: number): string {
    return createHmac('sha256', this.#secret).update(`PUT\n${objectKey}\n${contentType}\n${expires}`).digest('base64url');
  }

  #fileFor(objectKey: string): string {
    if (!parseObjectKey(objectKey)) throw new Error('Not a valid object key');
    const file = path.resolve(this.root, objectKey);
    // Belt and braces: the key pattern already rules out anything but logos/{uuid}/{hex}.{ext}.
    if (!file.startsWith(this.root + path.sep)) throw new Error('Not a valid object key');
    return file;
  }
}

/**
 * The configured secret, or the one every instance shares through the database (created by the first to
 * start; a secret an older version kept in the data directory is taken over, so its upload URLs stay good).
 */
export async function loadUploadSecret(db: Db, box: SecretBox, dataDir: string, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  return loadOrCreateSharedSecret(db, box, 'upload-signing-secret', async () => {
    const legacy = await fs.readFile(path.join(dataDir, 'upload-signing-secret'), 'utf8').catch(() => '');
    return legacy.trim().length >= 32 ? legacy.trim() : randomBytes(32).toString('base64url');
  });
}
