import { accessTokenClaimsSchema, type AccessTokenClaims } from '@latchkey/contract';

/** Reads the claims of a JWT without verifying it: the browser only needs exp/email/sub for routing. */
export function decodeClaims(token: string): AccessTokenClaims | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const padded = b64 + '='.repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const parsed = accessTokenClaimsSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Expiry is compared in seconds, as the token's `exp` is written. */
export function isExpired(claims: Pick<AccessTokenClaims, 'exp'>, nowMs = Date.now()): boolean {
  return claims.exp <= Math.floor(nowMs / 1000);
}
