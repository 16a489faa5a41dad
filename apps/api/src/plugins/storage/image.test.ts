import { describe, expect, it } from 'vitest';
import { LOGO_MAX_BYTES } from '@latchkey/contract';
import { sniffImage } from './image.js';
import { makePng, TINY_JPEG, pngChunk, withChunkBeforeIend, withJpegSegment } from './test-images.js';

describe('sniffImage', () => {
  it('accepts real PNGs and JPEGs', () => {
    expect(sniffImage(makePng())).toBe('image/png');
    expect(sniffImage(makePng(300, 60, [255, 255, 255]))).toBe('image/png');
    expect(sniffImage(withChunkBeforeIend(makePng(), 'tEXt', Buffer.from('Software\0Latchkey')))).toBe('image/png');
    expect(sniffImage(TINY_JPEG)).toBe('image/jpeg');
    expect(sniffImage(withJpegSegment(TINY_JPEG, 0xfe, Buffer.from('made by hand')))).toBe('image/jpeg');
    expect(sniffImage(new Uint8Array(makePng()))).toBe('image/png');
  });

  it('accepts a file just under the limit and refuses one at the limit', () => {
    const png = makePng();
    const fill = (target: number) => withChunkBeforeIend(png, 'prVt', Buffer.alloc(target - png.length - 12));
    expect(fill(LOGO_MAX_BYTES - 1).length).toBe(LOGO_MAX_BYTES - 1);
    expect(sniffImage(fill(LOGO_MAX_BYTES - 1))).toBe('image/png');
    expect(sniffImage(fill(LOGO_MAX_BYTES))).toBeNull();
    expect(sniffImage(fill(LOGO_MAX_BYTES + 5000))).toBeNull();
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>')],
    ['SVG with an XML prolog', Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['HTML', Buffer.from('<!doctype html><html><script>alert(1)</script></html>')],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')],
    ['PNG magic followed by script', Buffer.concat([makePng().subarray(0, 8), Buffer.from('<script>alert(1)</script>')])],
    ['a PNG with HTML appended (polyglot)', Buffer.concat([makePng(), Buffer.from('<html><script>alert(1)</script></html>')])],
    ['a PNG with any byte after IEND', Buffer.concat([makePng(), Buffer.from([0])])],
    ['a PNG with script in a valid text chunk', withChunkBeforeIend(makePng(), 'tEXt', Buffer.from('Comment\0<script>alert(1)</script>'))],
    ['a PNG with SVG in a private chunk', withChunkBeforeIend(makePng(), 'prVt', Buffer.from('<SVG onload=alert(1)>'))],
    ['a truncated PNG', makePng().subarray(0, 40)],
    ['a PNG without IEND', makePng().subarray(0, makePng().length - 12)],
    ['a PNG with a bad CRC', (() => { const b = Buffer.from(makePng()); b[b.length - 20]! ^= 0xff; return b; })()],
    ['a PNG whose first chunk is not IHDR', Buffer.concat([makePng().subarray(0, 8), pngChunk('tEXt', Buffer.from('a\0b')), makePng().subarray(8)])],
    ['a PNG without image data', Buffer.concat([makePng().subarray(0, 33), makePng().subarray(makePng().length - 12)])],
    ['a PNG of width 0', (() => { const b = Buffer.from(makePng()); b.writeUInt32BE(0, 16); return withFixedIhdrCrc(b); })()],
    ['JPEG magic only', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9])],
    ['JPEG magic followed by HTML', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.from('<html><script>alert(1)</script>')])],
    ['a JPEG with bytes after EOI', Buffer.concat([TINY_JPEG, Buffer.from('<script>alert(1)</script>')])],
    ['a JPEG with a zero byte after EOI', Buffer.concat([TINY_JPEG, Buffer.from([0])])],
    ['a JPEG with SVG in a comment', withJpegSegment(TINY_JPEG, 0xfe, Buffer.from('<svg onload=alert(1)>'))],
    ['a JPEG with script in APP1', withJpegSegment(TINY_JPEG, 0xe1, Buffer.from('Exif\0\0<script>alert(1)</script>'))],
    ['a truncated JPEG', TINY_JPEG.subarray(0, TINY_JPEG.length - 2)],
    ['a JPEG segment running past the end', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0x00])],
  ])('refuses %s', (_label, bytes) => {
    expect(sniffImage(bytes)).toBeNull();
  });
});

/** Recomputes the IHDR CRC after editing its data, so only the edited value is wrong. */
function withFixedIhdrCrc(png: Buffer): Buffer {
  const ihdr = pngChunk('IHDR', png.subarray(16, 29));
  return Buffer.concat([png.subarray(0, 8), ihdr, png.subarray(33)]);
}
