import { API_V2_ACCEPT, errorBodySchema, refreshResponseSchema } from '@latchkey/contract';
import { decodeClaims, isExpired } from './jwt';
import { clearSession, getSession, storeRefreshed } from './session';

export const API_BASE = '/api';

/** A failed call: HTTP status (0 = no response at all) and the server's message, shown verbatim. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  /** false for login/register: no bearer, no refresh. */
  auth?: boolean;
  accept?: string;
}

async function toApiError(res: Response): Promise<ApiError> {
  let text = res.statusText || `HTTP ${res.status}`;
  try {
    const parsed = errorBodySchema.safeParse(await res.json());
    if (parsed.success) return new ApiError(res.status, parsed.data.message, parsed.data.code);
  } catch {
    // Not JSON (e.g. a proxy's HTML page): keep the status text.
  }
  text = text || 'Request failed';
  return new ApiError(res.status, text);
}

async function send(path: string, opts: RequestOptions, token: string | null): Promise<Response> {
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    return await fetch(API_BASE + path, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  } catch {
    throw new ApiError(0, 'No internet connection');
  }
}

let inflightRefresh: Promise<boolean> | null = null;

/**
 * Exchanges the refresh token for a new pair. Refresh tokens rotate and reusing an old one revokes the
 * whole session, so concurrent callers share one in-flight request instead of racing.
 */
export function refreshSession(): Promise<boolean> {
  inflightRefresh ??= (async () => {
    const refreshToken = getSession().refreshToken;
    if (!refreshToken) return false;
    try {
      const res = await send('/auth/token/refresh', { method: 'POST', accept: API_V2_ACCEPT }, refreshToken);
      if (!res.ok) return false;
      const parsed = refreshResponseSchema.safeParse(await res.json());
      if (!parsed.success) return false;
      storeRefreshed(parsed.data.authToken, parsed.data.refreshToken);
      return true;
    } catch {
      return false;
    }
  })().finally(() => {
    inflightRefresh = null;
  });
  return inflightRefresh;
}

function tokenIsStale(token: string): boolean {
  const claims = decodeClaims(token);
  return claims === null || isExpired(claims);
}

/** The one place the portal talks to the API: bearer token, refresh on expiry or 401, typed errors. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const useAuth = opts.auth ?? true;
  if (!useAuth) {
    const res = await send(path, opts, null);
    if (!res.ok) throw await toApiError(res);
    return res;
  }
  let token = getSession().token;
  if (token && tokenIsStale(token) && (await refreshSession())) token = getSession().token;
  let res = await send(path, opts, token);
  if (res.status === 401 && getSession().refreshToken) {
    if (await refreshSession()) res = await send(path, opts, getSession().token);
    else clearSession();
  }
  if (!res.ok) throw await toApiError(res);
  return res;
}

export async function requestJson<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await request(path, opts);
  return (await res.json()) as T;
}

/** Message to show in a 'Failed' dialog for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  return 'Request failed';
}
