import { accountSessionSchema, type AccountSession, type ChangePassword } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';
import { accountKey } from './account-query';

/** The account page's calls, each written once as fetcher + hook. */
export const sessionsKey = ['account', 'sessions'] as const;

export async function listSessions(): Promise<AccountSession[]> {
  const res = await request('/account/sessions');
  return z.array(accountSessionSchema).parse(await res.json());
}
export async function endSession(id: string): Promise<void> {
  await request(`/account/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
export async function updateDisplayName(displayName: string): Promise<void> {
  await request('/account', { method: 'POST', body: { displayName } });
}
export async function changePassword(body: ChangePassword): Promise<void> {
  await request('/account/password', { method: 'POST', body });
}
export async function deleteAccount(): Promise<void> {
  await request('/account', { method: 'DELETE' });
}

export function useSessions() {
  return useQuery({ queryKey: sessionsKey, queryFn: listSessions });
}
export function useEndSession() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: endSession, onSettled: () => queryClient.invalidateQueries({ queryKey: sessionsKey }) });
}
export function useUpdateDisplayName() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: updateDisplayName, onSuccess: () => queryClient.invalidateQueries({ queryKey: accountKey }) });
}

/** "Chrome on Linux" from a User-Agent: enough to tell one's browsers apart. */
export function describeBrowser(userAgent: string | null): { browser: string | null; system: string | null } {
  if (!userAgent) return { browser: null, system: null };
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /HeadlessChrome/.test(userAgent)
            ? 'Chrome'
            : null;
  const system = /iPhone|iPad/.test(userAgent)
    ? 'iOS'
    : /Android/.test(userAgent)
      ? 'Android'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(userAgent)
          ? 'macOS'
          : /Linux|X11/.test(userAgent)
            ? 'Linux'
            : null;
  return { browser, system };
}
