import { authErrorFor, type AuthErrorEntry } from '@latchkey/contract';
import { ApiError } from '../../lib/http';
import { localText } from '../../lib/server-text';

/** Login/register failures map by HTTP status (the contract's authErrorFor); anything that is not an HTTP answer counts as 0. */
export function authErrorOf(error: unknown): AuthErrorEntry {
  const entry = authErrorFor(error instanceof ApiError ? error.status : 0);
  return { title: localText(entry.title), message: localText(entry.message) };
}
