import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an Authorization header carries `token` as a bearer credential. The scheme is matched without
 * regard to case (RFC 9110: `Bearer`, `bearer`, `BEARER` are the same scheme) and with any run of spaces
 * after it; the token itself is compared in constant time, through digests, so neither its content nor its
 * length shows in the time the answer takes.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header) return false;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  const given = createHash('sha256').update(match?.[1] ?? '').digest();
  const expected = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, expected) && match !== null;
}
