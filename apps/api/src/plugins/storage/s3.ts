import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { LOGO_MAX_BYTES, type LogoContentType } from '@latchkey/contract';
import { createHash } from 'node:crypto';
import { cleanLogo, storedLogoType } from './image.js';
import { newObjectKey, parseObjectKey, type LogoStorage, type UploadTarget } from './storage.js';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** S3-compatible endpoint (MinIO, R2, s3rver …); unset = AWS. */
  endpoint?: string;
  forcePathStyle?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  cdnBaseUrl: string;
  ttlSeconds: number;
}

/**
 * Scaled mode: the browser PUTs straight to the bucket with a presigned URL. The signature binds the key
 * and the Content-Type, and expires quickly, but it cannot bind the size or the real content, so the
 * service checks the object after the fact (verifyObject) before it accepts a logoUrl.
 */
export class S3LogoStorage implements LogoStorage {
  readonly driver = 's3' as const;
  readonly uploadBaseUrl: string;
  readonly cdnBaseUrl: string;
  readonly client: S3Client;
  readonly #bucket: string;
  readonly #ttl: number;

  constructor(options: S3StorageOptions) {
    this.#bucket = options.bucket;
    this.#ttl = options.ttlSeconds;
    this.cdnBaseUrl = options.cdnBaseUrl.replace(/\/+$/, '');
    this.uploadBaseUrl = s3BaseUrl(options);
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // Without this, SDK v3 adds CRC32 checksum parameters to presigned PUTs that browsers cannot satisfy.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async createUploadUrl({ applicationId, contentType }: { applicationId: string; contentType: LogoContentType }): Promise<UploadTarget> {
    const objectKey = newObjectKey(applicationId, contentType);
    const command = new PutObjectCommand({ Bucket: this.#bucket, Key: objectKey, ContentType: contentType });
    const uploadUrl = await getSignedUrl(this.client, command, {
      expiresIn: this.#ttl,
      // Content-Type is a signed header: a PUT with any other type fails the bucket's signature check.
      signableHeaders: new Set(['content-type']),
    });
    return { uploadUrl, objectKey, expiresAt: new Date(Date.now() + this.#ttl * 1000) };
  }

  /**
   * Size under the limit and an image sharp decodes as the key's type; anything else is deleted. A good
   * one is replaced in the bucket by its clean re-encoding (no metadata, capped dimensions), so the CDN
   * never serves the bytes the browser sent.
   */
  async verifyObject(objectKey: string): Promise<boolean> {
    const parsed = parseObjectKey(objectKey);
    if (!parsed) return false;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      if (head.ContentLength === undefined || head.ContentLength >= LOGO_MAX_BYTES || head.ContentLength === 0) {
        await this.deleteObject(objectKey);
        return false;
      }
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: objectKey, Range: `bytes=0-${LOGO_MAX_BYTES}` }));
      const bytes = object.Body ? await object.Body.transformToByteArray() : new Uint8Array();
      const typeMatches = !object.ContentType || object.ContentType === parsed.contentType;
      // Cleaned before (saving the same logoUrl again): the marker names these very bytes, which still
      // decode as the key's type. Not re-encoded again, so a JPEG does not lose quality on every save.
      if (typeMatches && object.Metadata?.[CLEAN_MARKER] === sha256(bytes) && (await storedLogoType(bytes)) === parsed.contentType) return true;
      const logo = await cleanLogo(bytes);
      if (!logo.ok || logo.contentType !== parsed.contentType || !typeMatches) {
        await this.deleteObject(objectKey);
        return false;
      }
      await this.client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: objectKey, Body: logo.bytes, ContentType: parsed.contentType, Metadata: { [CLEAN_MARKER]: sha256(logo.bytes) } }),
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async deleteObject(objectKey: string): Promise<void> {
    if (!parseObjectKey(objectKey)) return;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
  }

  close(): void {
    this.client.destroy();
  }
}

/** Object metadata naming the SHA-256 of the clean re-encoding this service stored under the key. */
const CLEAN_MARKER = 'latchkey-clean';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function isNotFound(error: unknown): boolean {
  if (error instanceof S3ServiceException) return error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey';
  return false;
}

/** Where presigned URLs point, without key or query: what the portal swaps for the CDN base. */
export function s3BaseUrl(options: Pick<S3StorageOptions, 'bucket' | 'region' | 'endpoint' | 'forcePathStyle'>): string {
  if (options.endpoint) {
    const endpoint = options.endpoint.replace(/\/+$/, '');
    return options.forcePathStyle ? `${endpoint}/${options.bucket}` : endpoint.replace('://', `://${options.bucket}.`);
  }
  return options.forcePathStyle
    ? `https://s3.${options.region}.amazonaws.com/${options.bucket}`
    : `https://${options.bucket}.s3.${options.region}.amazonaws.com`;
}
