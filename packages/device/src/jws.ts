/**
 * Reading a compact JWS as the platform's SDKs send it. Both encodings are accepted: base64url segments
 * (current clients) and standard base64 with padding (older ones); the signature covers the segments
 * exactly as they arrived. Nothing read here is trusted until the signature has been checked.
 */

/** One segment: base64url without padding, or standard base64 with up to two `=`. */
const SEGMENT = /^(?:[A-Za-z0-9_-]+|[A-Za-z0-9+/]+={0,2})$/;
export type Json = Record<string, unknown>;

export interface CompactJws {
  head: string;
  body: string;
  signature: Buffer;
  /** The bytes the signature covers: `head.body` as they arrived. */
  signingInput: Buffer;
}

/** The three segments of a compact JWS, or null when it is not one. */
export function splitJws(text: string, maxLength: number): CompactJws | null {
  if (text.length > maxLength) return null;
  const parts = text.trim().split('.');
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part))) return null;
  const [head, body, signature] = parts as [string, string, string];
  return { head, body, signature: Buffer.from(signature, 'base64'), signingInput: Buffer.from(`${head}.${body}`) };
}

/** A segment decoded as a JSON object; null for anything else (an array, a number, bad JSON). */
export function jsonSegment(segment: string): Json | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}
