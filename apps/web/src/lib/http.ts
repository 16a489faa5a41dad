import { API_V2_ACCEPT, apiErrors, errorBodySchema, refreshResponseSchema, type ErrorHint } from '@latchkey/contract';
import { getI18n } from 'react-i18next';
import { decodeClaims, isExpired } from './jwt';
import { localText } from './server-text';
import { clearSession, getSession, storeRefreshed } from './session';

export const API_BASE = '/api';

/** A failed call: HTTP status (0 = no response at all) and the server's message, shown verbatim. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: number,
    /** A validation failure's messages by field path (`name`, `callToAction.headline`). */
    readonly fieldErrors: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
  /** A 429's Retry-After, in seconds, when the server gave one. */
  retryAfterSeconds?: number;
  /** What would let it through on a development service: the host OUTBOUND_ALLOW takes. */
  hint?: ErrorHint;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  /** false for login/register: no bearer, no refresh. */
  auth?: boolean;
  /** A bearer token of another kind than the portal's session (a tile's lock-user sign-in): sent as is, never refreshed. */
  bearer?: string;
  accept?: string;
  /** Send `body` as this type, as is (a string), instead of as JSON: a signed operation is application/jwt. */
  contentType?: string;
  /** Ends the call (and a streamed body) when aborted: the live events stream closes with its page. */
  signal?: AbortSignal;
}

async function toApiError(res: Response): Promise<ApiError> {
  let text = res.statusText || `HTTP ${res.status}`;
  try {
    const parsed = errorBodySchema.safeParse(await res.json());
    if (parsed.success) {
      const error = new ApiError(res.status, parsed.data.message, parsed.data.code, parsed.data.errors);
      if (parsed.data.hint) error.hint = parsed.data.hint;
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      if (retryAfter >= 0) error.retryAfterSeconds = retryAfter;
      return error;
    }
  } catch {
    // Not JSON (e.g. a proxy's HTML page): keep the status text.
  }
  text = text || 'Request failed';
  return new ApiError(res.status, text);
}

async function send(path: string, opts: RequestOptions, token: string | null): Promise<Response> {
  // The reader's language, so mail the API sends on their behalf (an invitation) is written in it.
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json', 'Accept-Language': getI18n().language || 'en' };
  if (opts.body !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const body = opts.body === undefined ? undefined : opts.contentType ? String(opts.body) : JSON.stringify(opts.body);
  try {
    return await fetch(API_BASE + path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal });
  } catch (e) {
    if (opts.signal?.aborted) throw e;
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

/**
 * A 401 that answers what the person typed (the current password when changing it), not the session:
 * the session is fine, so it is neither refreshed nor retried — a retry would check the password twice.
 */
const TYPED_SECRET_REFUSALS: ReadonlySet<string> = new Set([apiErrors.wrongOldPassword]);

async function refusesTypedSecret(res: Response): Promise<boolean> {
  try {
    const parsed = errorBodySchema.safeParse(await res.clone().json());
    return parsed.success && TYPED_SECRET_REFUSALS.has(parsed.data.message);
  } catch {
    return false;
  }
}

/** The one place the portal talks to the API: bearer token, refresh on expiry or 401, typed errors. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const useAuth = opts.auth ?? true;
  if (!useAuth || opts.bearer) {
    const res = await send(path, opts, opts.bearer ?? null);
    if (!res.ok) throw await toApiError(res);
    return res;
  }
  let token = getSession().token;
  if (token && tokenIsStale(token) && (await refreshSession())) token = getSession().token;
  let res = await send(path, opts, token);
  if (res.status === 401 && getSession().refreshToken && !(await refusesTypedSecret(res))) {
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

/** Message to show in a 'Failed' dialog for any thrown value, in the reader's language when we know it. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError && error.status === 0) return String(getI18n().t('common.offline'));
  if (error instanceof Error && error.message) return localText(error.message);
  return String(getI18n().t('common.requestFailed'));
}
