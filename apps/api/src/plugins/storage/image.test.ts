import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { LOGO_MAX_BYTES, LOGO_MAX_DIMENSION_PX } from '@latchkey/contract';
import { cleanLogo, storedLogoType } from './image.js';
import { jpegWithExif, makePng, pngChunk, pngWithExif, TINY_JPEG, withChunkBeforeIend, withJpegSegment } from '../../../test/fixtures/images.js';

async function clean(bytes: Uint8Array) {
  const result = await cleanLogo(bytes);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result;
}

describe('cleanLogo', () => {
  it('re-encodes real PNGs and JPEGs as the same type, pixels intact', async () => {
    const png = await clean(makePng(30, 12, [255, 0, 0]));
    expect(png.contentType).toBe('image/png');
    expect([png.width, png.height]).toEqual([30, 12]);
    const { data } = await sharp(png.bytes).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).toEqual([255, 0, 0]);
    const jpeg = await clean(TINY_JPEG);
    expect(jpeg.contentType).toBe('image/jpeg');
    expect((await sharp(jpeg.bytes).metadata()).format).toBe('jpeg');
  });

  it('strips EXIF and GPS from a JPEG, turning it upright first', async () => {
    const input = await jpegWithExif(40, 20);
    const before = await sharp(input).metadata();
    expect(before.exif?.length).toBeGreaterThan(0);
    expect(before.orientation).toBe(6);
    const out = await clean(input);
    const after = await sharp(out.bytes).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.orientation).toBeUndefined();
    expect(after.icc).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect([after.width, after.height]).toEqual([20, 40]);
    expect(out.bytes.includes(Buffer.from('SpyCam'))).toBe(false);
  });

  it('strips EXIF and text chunks from a PNG', async () => {
    const input = await pngWithExif();
    expect((await sharp(input).metadata()).exif?.length).toBeGreaterThan(0);
    const out = await clean(input);
    expect((await sharp(out.bytes).metadata()).exif).toBeUndefined();
    expect(out.bytes.includes(Buffer.from('SpyCam'))).toBe(false);
    expect(out.bytes.includes(Buffer.from('taken at home'))).toBe(false);
  });

  it('drops bytes appended after the image', async () => {
    const out = await clean(Buffer.concat([makePng(), Buffer.from('appended payload')]));
    expect(out.bytes.includes(Buffer.from('appended payload'))).toBe(false);
  });

  it(`scales a large logo down to ${LOGO_MAX_DIMENSION_PX} px on its longer side, and never up`, async () => {
    const wide = await clean(makePng(3000, 300));
    expect([wide.width, wide.height]).toEqual([LOGO_MAX_DIMENSION_PX, 102]);
    expect((await sharp(wide.bytes).metadata()).width).toBe(LOGO_MAX_DIMENSION_PX);
    const small = await clean(makePng(5, 3));
    expect([small.width, small.height]).toEqual([5, 3]);
  });

  it('refuses an image of more than 25 megapixels before decoding it', async () => {
    expect(await cleanLogo(makePng(5001, 5000))).toEqual({ ok: false, reason: 'tooManyPixels' });
  });

  it('refuses a file at the size limit', async () => {
    const png = makePng();
    const big = withChunkBeforeIend(png, 'prVt', Buffer.alloc(LOGO_MAX_BYTES - png.length - 12));
    expect(big.length).toBe(LOGO_MAX_BYTES);
    expect(await cleanLogo(big)).toEqual({ ok: false, reason: 'notImage' });
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9" onload="alert(1)"><rect/></svg>')],
    ['SVG with an XML prolog', Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>')],
    ['HTML', Buffer.from('<!doctype html><html><script>alert(1)</script></html>')],
    ['a GIF', Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')],
    ['PNG magic followed by script', Buffer.concat([makePng().subarray(0, 8), Buffer.from('<script>alert(1)</script>')])],
    ['a PNG with HTML appended (polyglot)', Buffer.concat([makePng(), Buffer.from('<html><script>alert(1)</script></html>')])],
    ['a PNG with script in a valid text chunk (polyglot)', withChunkBeforeIend(makePng(), 'tEXt', Buffer.from('Comment\0<script>alert(1)</script>'))],
    ['a PNG with SVG in a private chunk (polyglot)', withChunkBeforeIend(makePng(), 'prVt', Buffer.from('<SVG onload=alert(1)>'))],
    ['a truncated PNG', makePng().subarray(0, 40)],
    ['a PNG with a bad CRC', (() => { const b = Buffer.from(makePng()); b[b.length - 20]! ^= 0xff; return b; })()],
    ['a PNG without image data', Buffer.concat([makePng().subarray(0, 33), makePng().subarray(makePng().length - 12)])],
    ['a PNG whose first chunk is not IHDR', Buffer.concat([makePng().subarray(0, 8), pngChunk('tEXt', Buffer.from('a\0b')), makePng().subarray(8)])],
    ['JPEG magic only', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9])],
    ['JPEG magic followed by HTML', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.from('<html><script>alert(1)</script>')])],
    ['a JPEG with HTML after EOI (polyglot)', Buffer.concat([TINY_JPEG, Buffer.from('<html><script>alert(1)</script>')])],
    ['a JPEG with SVG in a comment (polyglot)', withJpegSegment(TINY_JPEG, 0xfe, Buffer.from('<svg onload=alert(1)>'))],
    ['a truncated JPEG', TINY_JPEG.subarray(0, TINY_JPEG.length - 30)],
  ])('refuses %s', async (_label, bytes) => {
    expect(await cleanLogo(bytes)).toEqual({ ok: false, reason: 'notImage' });
  });
});

describe('storedLogoType', () => {
  it('names what a stored object decodes as, or null', async () => {
    expect(await storedLogoType((await clean(makePng())).bytes)).toBe('image/png');
    expect(await storedLogoType((await clean(TINY_JPEG)).bytes)).toBe('image/jpeg');
    expect(await storedLogoType(Buffer.from('<svg/>'))).toBeNull();
    expect(await storedLogoType(makePng().subarray(0, 40))).toBeNull();
  });
});
