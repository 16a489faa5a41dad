import { decodeClaims, isExpired } from './jwt';
import { clearSession, getSession } from './session';

export type SessionStatus = 'valid' | 'refreshed' | 'logged-out';

/**
 * The session check: no token → logged out; an expired token is refreshed when a refresh token
 * exists (failure → logout); an unexpired token is valid.
 */
export async function checkSession(refresh: () => Promise<boolean>, nowMs = Date.now()): Promise<SessionStatus> {
  const { token, refreshToken } = getSession();
  if (!token) return 'logged-out';
  const claims = decodeClaims(token);
  if (claims && !isExpired(claims, nowMs)) return 'valid';
  if (refreshToken && (await refresh())) return 'refreshed';
  clearSession();
  return 'logged-out';
}
