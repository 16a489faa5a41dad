import { accessCodeListSchema, accessCodeSchema, type AccessCode, type CreateAccessCode, type LockLogPage } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient, type InfiniteData } from '@tanstack/react-query';
import { useEffect } from 'react';
import { request } from '../../../lib/http';
import { LOCK_PAGE_FRESH_MS, lockKeys, lockPath } from '../api';

/** A lock's access codes sit beside its shares and log, under the application's key. */
export const accessCodeKeys = {
  list: (appId: string, lockId: string) => ['applications', appId, 'locks', 'access-codes', lockId] as const,
};

const codesPath = (appId: string, lockId: string) => `${lockPath(appId, lockId)}/access-code`;

export async function listAccessCodes(appId: string, lockId: string): Promise<AccessCode[]> {
  const res = await request(codesPath(appId, lockId));
  return accessCodeListSchema.parse(await res.json());
}

export async function createAccessCode(appId: string, lockId: string, body: CreateAccessCode): Promise<AccessCode> {
  const res = await request(codesPath(appId, lockId), { method: 'POST', body });
  return accessCodeSchema.parse(await res.json());
}

export async function withdrawAccessCode(appId: string, lockId: string, accessCodeId: string): Promise<void> {
  await request(`${codesPath(appId, lockId)}/${encodeURIComponent(accessCodeId)}`, { method: 'DELETE' });
}

/** How often the list is read again while a code waits for its door to take it (status `setting`). */
const SETTING_POLL_MS = 4000;

/**
 * The lock's codes (and withdrawn offline codes until their end). While one is still being set on its
 * door the list is read again now and then, so it turns to Set without a reload.
 */
export function useAccessCodes(appId: string, lockId: string) {
  return useQuery({
    queryKey: accessCodeKeys.list(appId, lockId),
    queryFn: () => listAccessCodes(appId, lockId),
    staleTime: LOCK_PAGE_FRESH_MS,
    refetchInterval: (query) =>
      query.state.data?.some((c) => c.status === 'setting') ? SETTING_POLL_MS : false,
  });
}

/**
 * Reads the codes again when the lock's live activity brings a code created or withdrawn since the page
 * opened (by another owner, or a lock ADMIN through the platform's calls), so the list never shows a code
 * that is gone.
 */
export function useFollowAccessCodeChanges(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  useEffect(() => {
    const since = Date.now() / 1000;
    const seen = new Set<string>();
    const logKey = lockKeys.log(appId, lockId);
    return queryClient.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated' || event.action.type !== 'success') return;
      if (!logKey.every((part, i) => event.query.queryKey[i] === part)) return;
      const newest = (event.query.state.data as InfiniteData<LockLogPage> | undefined)?.pages[0]?.items[0];
      if (!newest || newest.type !== 'ACCESS_CODE' || newest.timestamp < since || seen.has(newest.id)) return;
      seen.add(newest.id);
      void queryClient.invalidateQueries({ queryKey: accessCodeKeys.list(appId, lockId) });
    });
  }, [appId, lockId, queryClient]);
}

export function useCreateAccessCode(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateAccessCode) => createAccessCode(appId, lockId, body),
    onSuccess: (code) => {
      queryClient.setQueryData<AccessCode[]>(accessCodeKeys.list(appId, lockId), (list) =>
        list ? [...list.filter((c) => c.accessCodeId !== code.accessCodeId), code] : list,
      );
      void queryClient.invalidateQueries({ queryKey: accessCodeKeys.list(appId, lockId) });
    },
  });
}

export function useWithdrawAccessCode(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (accessCodeId: string) => withdrawAccessCode(appId, lockId, accessCodeId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accessCodeKeys.list(appId, lockId) }),
  });
}
