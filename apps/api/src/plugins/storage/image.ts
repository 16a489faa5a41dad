import { LOGO_MAX_BYTES, type LogoContentType } from '@latchkey/contract';

/**
 * What a logo really is, from its bytes. Not a magic-number check: the whole structure is walked, so a
 * file that merely starts like a PNG or JPEG (an HTML or SVG polyglot, a truncated file, bytes appended
 * after the image) is refused. Returns null for anything that is not one clean PNG or JPEG under the limit.
 */
export function sniffImage(bytes: Uint8Array): LogoContentType | null {
  if (bytes.length === 0 || bytes.length >= LOGO_MAX_BYTES) return null;
  const type = isPng(bytes) ? 'image/png' : isJpeg(bytes) ? 'image/jpeg' : null;
  if (!type || containsMarkup(bytes)) return null;
  return type;
}

/** Markup a browser or viewer might act on if it ever ignored the content type. */
const SUSPICIOUS = ['<script', '<html', '<svg', '<!doctype', '<iframe', '<body', '<object', '<embed', '<?php', 'javascript:'];

export function containsMarkup(bytes: Uint8Array): boolean {
  // latin1 keeps one char per byte; lower-casing makes the search case-insensitive.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').toLowerCase();
  return SUSPICIOUS.some((needle) => text.includes(needle));
}

// ---------------------------------------------------------------- PNG

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const MAX_DIMENSION = 16_384;
/** Valid bit depths per colour type (PNG spec, table 11.1). */
const PNG_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u32 = (b: Uint8Array, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;

function isPng(b: Uint8Array): boolean {
  if (b.length < 8 || PNG_SIGNATURE.some((v, i) => b[i] !== v)) return false;
  let offset = 8;
  let index = 0;
  let sawIdat = false;
  let colourType = -1;
  while (offset + 12 <= b.length) {
    const length = u32(b, offset);
    if (length > 0x7fffffff || offset + 12 + length > b.length) return false;
    const type = String.fromCharCode(b[offset + 4]!, b[offset + 5]!, b[offset + 6]!, b[offset + 7]!);
    if (!/^[A-Za-z]{4}$/.test(type)) return false;
    const data = offset + 8;
    if (crc32(b, offset + 4, data + length) !== u32(b, data + length)) return false;
    if (index === 0) {
      if (type !== 'IHDR' || length !== 13) return false;
      const width = u32(b, data);
      const height = u32(b, data + 4);
      const depth = b[data + 8]!;
      colourType = b[data + 9]!;
      if (width === 0 || height === 0 || width > MAX_DIMENSION || height > MAX_DIMENSION) return false;
      if (!PNG_DEPTHS[colourType]?.includes(depth)) return false;
      if (b[data + 10] !== 0 || b[data + 11] !== 0 || b[data + 12]! > 1) return false;
    } else if (type === 'IHDR') {
      return false;
    }
    if (type === 'IDAT') sawIdat = true;
    if (type === 'PLTE' && colourType === 3 && (length === 0 || length % 3 !== 0)) return false;
    offset = data + length + 4;
    index++;
    if (type === 'IEND') return length === 0 && sawIdat && offset === b.length;
  }
  return false;
}

// ---------------------------------------------------------------- JPEG

/** Start-of-frame markers (C0–CF except DHT C4, JPG C8, DAC CC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function isJpeg(b: Uint8Array): boolean {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8 || b[2] !== 0xff) return false;
  let offset = 2;
  let sawFrame = false;
  let sawScan = false;
  while (offset < b.length) {
    if (b[offset] !== 0xff) return false;
    // Fill bytes: any number of 0xFF before a marker.
    while (offset < b.length && b[offset] === 0xff) offset++;
    if (offset >= b.length) return false;
    const marker = b[offset]!;
    offset++;
    if (marker === 0xd9) return sawFrame && sawScan && offset === b.length; // EOI: nothing may follow
    if (marker === 0x00 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) return false;
    if (offset + 2 > b.length) return false;
    const length = u16(b, offset);
    if (length < 2 || offset + length > b.length) return false;
    if (isSof(marker)) {
      if (sawFrame || length < 8) return false;
      const height = u16(b, offset + 3);
      const width = u16(b, offset + 5);
      if (width === 0 || height === 0) return false;
      sawFrame = true;
    }
    offset += length;
    if (marker === 0xda) {
      if (!sawFrame) return false;
      sawScan = true;
      // Entropy-coded data: runs until a marker that is not a stuffed 0xFF00 or a restart marker.
      while (offset < b.length) {
        if (b[offset] === 0xff) {
          const next = b[offset + 1];
          if (next === undefined) return false;
          if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
            offset += next === 0xff ? 1 : 2;
            continue;
          }
          break;
        }
        offset++;
      }
    }
  }
  return false;
}
