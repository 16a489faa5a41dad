import { apiErrors, LOGO_MAX_BYTES, type LogoContentType } from '@latchkey/contract';
import { AppError, badRequest } from '../../errors.js';
import { cleanLogo } from '../../plugins/storage/image.js';
import type { LocalLogoStorage } from '../../plugins/storage/local.js';
import { logoObjectKeyFromUrl, parseObjectKey, type LogoStorage } from '../../plugins/storage/storage.js';

/** An upload URL for one new object under the application's prefix. */
export async function createLogoUpload(storage: LogoStorage, applicationId: string, contentType: LogoContentType) {
  const { uploadUrl } = await storage.createUploadUrl({ applicationId, contentType });
  return { uploadUrl };
}

/**
 * Before a logoUrl is saved (applications update): it must lie under the CDN base and the application's
 * own prefix, and the object behind it must exist and be a clean image (S3: checked now, bad objects
 * deleted). Throws 400 `logoUrlNotAllowed` otherwise. `null` (clearing the logo) needs no check.
 */
export async function checkLogoUrl(storage: LogoStorage, applicationId: string, logoUrl: string): Promise<void> {
  const objectKey = logoObjectKeyFromUrl(logoUrl, storage.cdnBaseUrl, applicationId);
  if (!objectKey || !(await storage.verifyObject(objectKey))) throw badRequest(apiErrors.logoUrlNotAllowed);
}

/** The declared media type without parameters, lower-cased. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Local driver, before the body is read: a key of ours, a valid unexpired signature, and a declared
 * Content-Type equal to the signed one. Returns the object key.
 */
export function authoriseUpload(storage: LocalLogoStorage, keyInPath: string, query: Record<string, unknown>, contentTypeHeader: string | undefined): string {
  const objectKey = `logos/${keyInPath}`;
  const parsed = parseObjectKey(objectKey);
  if (!parsed) throw new AppError(403, apiErrors.uploadUrlInvalid);
  const check = storage.verifyUpload(objectKey, query, parsed.contentType);
  if (!check.ok) throw new AppError(403, apiErrors.uploadUrlInvalid);
  if (mediaType(contentTypeHeader) !== parsed.contentType) throw new AppError(415, apiErrors.uploadTypeNotSigned);
  return objectKey;
}

/**
 * Local driver, once the bytes are in: under 1 MB, an image sharp decodes, of the declared type; what is
 * stored is its clean re-encoding (no metadata, at most LOGO_MAX_DIMENSION_PX), never the bytes sent.
 */
export async function receiveUpload(storage: LocalLogoStorage, objectKey: string, bytes: Buffer): Promise<void> {
  const declared = parseObjectKey(objectKey)!.contentType;
  if (bytes.length >= LOGO_MAX_BYTES) throw new AppError(413, apiErrors.uploadTooBig);
  const logo = await cleanLogo(bytes);
  if (!logo.ok) throw badRequest(logo.reason === 'tooManyPixels' ? apiErrors.uploadTooManyPixels : apiErrors.uploadNotImage);
  if (logo.contentType !== declared) throw new AppError(415, apiErrors.uploadTypeMismatch);
  await storage.put(objectKey, logo.bytes);
}
