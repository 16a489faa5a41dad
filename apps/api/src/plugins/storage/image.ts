import sharp from 'sharp';
import { LOGO_MAX_BYTES, LOGO_MAX_DIMENSION_PX, LOGO_MAX_INPUT_PIXELS, type LogoContentType } from '@latchkey/contract';

// A server decodes one small logo at a time: no operation cache (it would only hold memory).
sharp.cache(false);

export type CleanLogo = { ok: true; contentType: LogoContentType; bytes: Buffer; width: number; height: number };
/** Why an upload was refused: not a decodable PNG/JPEG (or a polyglot), or more pixels than we decode. */
export type LogoRefusal = { ok: false; reason: 'notImage' | 'tooManyPixels' };

/**
 * The logo pipeline: what is stored is never the uploaded bytes but a fresh encoding of their pixels.
 * sharp decodes the image (a truncated or corrupt file fails here), turns it upright by its EXIF
 * orientation, scales it down to LOGO_MAX_DIMENSION_PX, and writes a new PNG (for PNG input) or JPEG
 * (for JPEG input) without any metadata: no EXIF, GPS, XMP, comments, text chunks or trailing bytes.
 *
 * Only PNG and JPEG reach the decoder (by their signature, so SVG, GIF, TIFF, WebP… never do), and a file
 * carrying markup a browser could act on (an HTML/SVG polyglot) is refused outright rather than cleaned.
 */
export async function cleanLogo(input: Uint8Array): Promise<CleanLogo | LogoRefusal> {
  const notImage = { ok: false, reason: 'notImage' } as const;
  if (input.length === 0 || input.length >= LOGO_MAX_BYTES) return notImage;
  const contentType = signatureType(input);
  if (!contentType || containsMarkup(input)) return notImage;
  try {
    // The header alone: its size is checked here, so the decode below never starts on a bomb.
    const header = await sharp(input, { limitInputPixels: false }).metadata();
    if (header.format !== (contentType === 'image/png' ? 'png' : 'jpeg')) return notImage;
    if ((header.width ?? 0) * (header.height ?? 0) > LOGO_MAX_INPUT_PIXELS) return { ok: false, reason: 'tooManyPixels' };
    const pipeline = sharp(input, { failOn: 'error', limitInputPixels: LOGO_MAX_INPUT_PIXELS, animated: false })
      .autoOrient()
      .resize({ width: LOGO_MAX_DIMENSION_PX, height: LOGO_MAX_DIMENSION_PX, fit: 'inside', withoutEnlargement: true });
    const encoded =
      contentType === 'image/png'
        ? pipeline.png({ compressionLevel: 9, adaptiveFiltering: true })
        : pipeline.jpeg({ quality: 90, mozjpeg: true });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
    // A re-encoding can, rarely, grow past the limit (a tiny JPEG of noise); it must still fit.
    if (data.length >= LOGO_MAX_BYTES) return notImage;
    return { ok: true, contentType, bytes: data, width: info.width, height: info.height };
  } catch {
    return notImage;
  }
}

/** What the stored bytes decode as, without decoding the pixels: for checks of objects already stored. */
export async function storedLogoType(bytes: Uint8Array): Promise<LogoContentType | null> {
  const type = signatureType(bytes);
  if (!type || containsMarkup(bytes)) return null;
  try {
    const metadata = await sharp(bytes, { failOn: 'error', limitInputPixels: LOGO_MAX_INPUT_PIXELS }).metadata();
    return metadata.format === (type === 'image/png' ? 'png' : 'jpeg') ? type : null;
  } catch {
    return null;
  }
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG or JPEG by signature only; the decoder judges the rest. */
function signatureType(b: Uint8Array): LogoContentType | null {
  if (b.length >= 8 && PNG_SIGNATURE.every((v, i) => b[i] === v)) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  return null;
}

/** Markup a browser or viewer might act on if it ever ignored the content type. */
const SUSPICIOUS = ['<script', '<html', '<svg', '<!doctype', '<iframe', '<body', '<object', '<embed', '<?php', 'javascript:'];

export function containsMarkup(bytes: Uint8Array): boolean {
  // latin1 keeps one char per byte; lower-casing makes the search case-insensitive.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').toLowerCase();
  return SUSPICIOUS.some((needle) => text.includes(needle));
}
