import { tileSignInResponseSchema, type TileSignInResponse } from '@latchkey/contract';

/**
 * The lock-user token a tile's emailed link signed someone in with: kept in this tab's sessionStorage
 * under its own key, apart from the portal's session (which it is not), and forgotten on Sign out, when
 * it expires, or when the API no longer takes it.
 */
export const TILE_SIGN_IN_KEY = 'latchkey.tileSignIn';

export function getTileSignIn(nowSeconds = Date.now() / 1000): TileSignInResponse | null {
  try {
    const stored = sessionStorage.getItem(TILE_SIGN_IN_KEY);
    if (!stored) return null;
    const parsed = tileSignInResponseSchema.safeParse(JSON.parse(stored));
    if (parsed.success && parsed.data.expiresAt > nowSeconds) return parsed.data;
    sessionStorage.removeItem(TILE_SIGN_IN_KEY);
  } catch {
    // Storage blocked or a damaged entry: signed out.
  }
  return null;
}

export function storeTileSignIn(signIn: TileSignInResponse): void {
  try {
    sessionStorage.setItem(TILE_SIGN_IN_KEY, JSON.stringify(signIn));
  } catch {
    // Storage blocked: the page keeps the sign-in in memory for as long as it is open.
  }
}

export function forgetTileSignIn(): void {
  try {
    sessionStorage.removeItem(TILE_SIGN_IN_KEY);
  } catch {
    // Nothing was kept.
  }
}
