import zlib from 'node:zlib';
import sharp from 'sharp';
import { makePng } from '../../../test/scale/png.js';

/** Test bytes: real images built by hand, so the sniffing is tested against structure, not fixtures. */
export { makePng };

/** A 2×2 baseline JPEG (encoded once with jpeg-js, quality 50). */
export const TINY_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wCEABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2MBERISGBUYLxoaL2NCOEJjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY//AABEIAAIAAgMBEQACEQEDEQH/xAGiAAABBQEBAQEBAQAAAAAAAAAAAQIDBAUGBwgJCgsQAAIBAwMCBAMFBQQEAAABfQECAwAEEQUSITFBBhNRYQcicRQygZGhCCNCscEVUtHwJDNicoIJChYXGBkaJSYnKCkqNDU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6g4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2drh4uPk5ebn6Onq8fLz9PX29/j5+gEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoLEQACAQIEBAMEBwUEBAABAncAAQIDEQQFITEGEkFRB2FxEyIygQgUQpGhscEJIzNS8BVictEKFiQ04SXxFxgZGiYnKCkqNTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqCg4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2dri4+Tl5ufo6ery8/T19vf4+fr/2gAMAwEAAhEDEQA/AOOroOU//9k=',
  'base64',
);

/** One PNG chunk with a correct CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** Inserts a chunk just before IEND (the last 12 bytes), keeping the file valid. */
export function withChunkBeforeIend(png: Buffer, type: string, data: Buffer): Buffer {
  return Buffer.concat([png.subarray(0, png.length - 12), pngChunk(type, data), png.subarray(png.length - 12)]);
}

/** Inserts a segment right after SOI (e.g. a COM comment, marker 0xFE). */
export function withJpegSegment(jpeg: Buffer, marker: number, data: Buffer): Buffer {
  const header = Buffer.from([0xff, marker, 0, 0]);
  header.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), header, data, jpeg.subarray(2)]);
}

/** A JPEG carrying EXIF with a camera, a copyright and a GPS position, and an orientation of 6 (90° CW). */
export async function jpegWithExif(width = 40, height = 20): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withExifMerge({
      IFD0: { Make: 'SpyCam', Model: 'Model X', Copyright: 'Someone' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' },
    })
    .toBuffer();
}

/** A PNG carrying an eXIf chunk and a text chunk. */
export async function pngWithExif(): Promise<Buffer> {
  const withExif = await sharp(makePng(20, 10)).png().withExif({ IFD0: { Make: 'SpyCam', Copyright: 'Someone' } }).toBuffer();
  return withChunkBeforeIend(withExif, 'tEXt', Buffer.from('Comment\0taken at home'));
}

