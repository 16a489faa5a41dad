import { indexedDbKeyStore } from './device-key-store';
import { decodeClaims } from './jwt';

/**
 * The auth session: what the portal keeps in browser storage, one key each. Not the per-session key pair
 * the sign-in answer carries (privateKey/publicKey): nothing in the portal uses it, and a private key in
 * localStorage is one more secret for any script on the origin to read. The lock-signing key is a non-extractable CryptoKey in IndexedDB (device-key-store).
 */
export const SESSION_KEYS = {
  token: 'token',
  refreshToken: 'refreshToken',
  email: 'email',
  appId: 'appId',
  displayName: 'displayName',
} as const;
type SessionKey = keyof typeof SESSION_KEYS;

export interface Session {
  token: string | null;
  refreshToken: string | null;
  email: string | null;
  appId: string | null;
  displayName: string | null;
}

const listeners = new Set<() => void>();
let snapshot: Session | null = null;

function read(key: SessionKey): string | null {
  return localStorage.getItem(SESSION_KEYS[key]);
}

function write(key: SessionKey, value: string | null | undefined): void {
  if (value === null || value === undefined) localStorage.removeItem(SESSION_KEYS[key]);
  else localStorage.setItem(SESSION_KEYS[key], value);
}

/** Where earlier versions of the portal kept that key pair: removed once from browsers that still hold it. */
export const RETIRED_KEYS = ['privateKey', 'publicKey'] as const;
function dropRetiredKeys(): void {
  try {
    for (const key of RETIRED_KEYS) localStorage.removeItem(key);
  } catch {
    // Storage unavailable (privacy mode): nothing was kept there either.
  }
}
dropRetiredKeys();

function changed(): void {
  snapshot = null;
  for (const l of listeners) l();
}

export function getSession(): Session {
  // Cached so useSyncExternalStore sees a stable object between changes.
  snapshot ??= {
    token: read('token'),
    refreshToken: read('refreshToken'),
    email: read('email'),
    appId: read('appId'),
    displayName: read('displayName'),
  };
  return snapshot;
}

export function subscribeSession(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export interface SignedIn {
  authToken: string;
  refreshToken: string;
  /** Sent by the API's sign-in answer; never stored (see SESSION_KEYS). */
  privateKey?: string;
  publicKey?: string;
}

/** After login/register: stores the tokens and the email taken from the token's claim. */
export function storeSignIn(auth: SignedIn): void {
  write('token', auth.authToken);
  write('refreshToken', auth.refreshToken);
  write('email', decodeClaims(auth.authToken)?.email ?? null);
  changed();
}

/** After a refresh: refresh tokens rotate, so a new one replaces the old when the server sends it. */
export function storeRefreshed(authToken: string, refreshToken?: string): void {
  write('token', authToken);
  if (refreshToken) write('refreshToken', refreshToken);
  changed();
}

export function setSessionValue(key: 'appId' | 'displayName', value: string | null): void {
  if (read(key) === value) return;
  write(key, value);
  changed();
}

/** Logout clears all browser storage, the lock-signing key in IndexedDB included. */
export function clearSession(): void {
  localStorage.clear();
  if (typeof indexedDB !== 'undefined') indexedDbKeyStore.clear().catch((e: unknown) => console.warn('The signing key could not be removed', e));
  changed();
}

/** The signed-in user's id (token `sub`), used to hide Remove on the user's own owner entry. */
export function currentUserId(): string | null {
  const token = getSession().token;
  return token ? (decodeClaims(token)?.sub ?? null) : null;
}
