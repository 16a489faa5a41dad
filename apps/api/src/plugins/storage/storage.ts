import { randomBytes } from 'node:crypto';
import { isUuid, type LogoContentType } from '@latchkey/contract';

/**
 * Logo storage. The service hands out a short-lived upload URL for one object
 * under the application's own prefix; the client PUTs the bytes there; the portal swaps the upload base
 * for the CDN base, drops the query and saves that as logoUrl. Two drivers: local disk (the service is
 * upload host and CDN) and S3-compatible (presigned PUT, served by a CDN).
 */
export interface UploadTarget {
  uploadUrl: string;
  objectKey: string;
  expiresAt: Date;
}

export interface LogoStorage {
  readonly driver: 'local' | 's3';
  /** Every upload URL starts with this; the portal replaces it with cdnBaseUrl (deriveLogoUrl). */
  readonly uploadBaseUrl: string;
  readonly cdnBaseUrl: string;
  createUploadUrl(input: { applicationId: string; contentType: LogoContentType }): Promise<UploadTarget>;
  /**
   * Is the object there and a clean logo? Called before a logoUrl is accepted. The S3 driver checks size
   * and real content here (the bytes went straight to the bucket) and deletes a bad object.
   */
  verifyObject(objectKey: string): Promise<boolean>;
  deleteObject(objectKey: string): Promise<void>;
  /** Releases connections (S3 client); nothing to do for local disk. */
  close?(): void;
}

/**
 * logos/{applicationId}/{32 hex}.{png|jpg}: nothing else is ever a key, so no traversal can be one. The id
 * segment is lower-case and must pass the contract's `isUuid`, the one UUID rule.
 */
const OBJECT_KEY_PATTERN = /^logos\/([0-9a-f-]{36})\/([0-9a-f]{32})\.(png|jpg)$/;

function matchObjectKey(objectKey: string): RegExpExecArray | null {
  const match = OBJECT_KEY_PATTERN.exec(objectKey);
  return match && isUuid(match[1]!) ? match : null;
}

const EXTENSIONS: Record<LogoContentType, 'png' | 'jpg'> = { 'image/png': 'png', 'image/jpeg': 'jpg' };

/** A fresh, unguessable key under the application's prefix; its extension states the content type. */
export function newObjectKey(applicationId: string, contentType: LogoContentType): string {
  const key = `logos/${applicationId.toLowerCase()}/${randomBytes(16).toString('hex')}.${EXTENSIONS[contentType]}`;
  if (!matchObjectKey(key)) throw new Error('Not a valid application id');
  return key;
}

export interface ParsedObjectKey {
  applicationId: string;
  contentType: LogoContentType;
}

/** Strict parse of an object key; null for anything that is not exactly one of ours. */
export function parseObjectKey(objectKey: string): ParsedObjectKey | null {
  const match = matchObjectKey(objectKey);
  if (!match) return null;
  return { applicationId: match[1]!, contentType: match[3] === 'png' ? 'image/png' : 'image/jpeg' };
}

/**
 * The object key behind a logoUrl, if the URL lies under the CDN base and the application's own prefix;
 * otherwise null. Checked on the raw string: a URL parser would resolve `..` and percent-escapes first,
 * so `…/logos/{mine}/../{theirs}/x.png` must never get that far.
 */
export function logoObjectKeyFromUrl(logoUrl: string, cdnBaseUrl: string, applicationId: string): string | null {
  const base = `${cdnBaseUrl.replace(/\/+$/, '')}/`;
  if (!logoUrl.startsWith(base)) return null;
  const objectKey = logoUrl.slice(base.length);
  const parsed = parseObjectKey(objectKey);
  if (!parsed || parsed.applicationId !== applicationId.toLowerCase()) return null;
  return objectKey;
}
