import { lockShareSchema, type CreateLockShare, type LockShare } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';
import { LOCK_PAGE_FRESH_MS, lockKeys, lockPath } from './api';

const sharesPath = (appId: string, lockId: string) => `${lockPath(appId, lockId)}/user`;
const shareListSchema = z.array(lockShareSchema);

export async function listShares(appId: string, lockId: string): Promise<LockShare[]> {
  const res = await request(sharesPath(appId, lockId));
  return shareListSchema.parse(await res.json());
}

/** Shares to a user, or to an email with no user yet (who then gets the application's invitation email). */
export async function addShare(appId: string, lockId: string, body: CreateLockShare): Promise<void> {
  await request(sharesPath(appId, lockId), { method: 'POST', body });
}

export async function revokeShare(appId: string, lockId: string, userId: string): Promise<void> {
  await request(`${sharesPath(appId, lockId)}/${encodeURIComponent(userId)}`, { method: 'DELETE' });
}

export const sharesQuery = (appId: string, lockId: string) => ({
  queryKey: lockKeys.shares(appId, lockId),
  queryFn: () => listShares(appId, lockId),
  staleTime: LOCK_PAGE_FRESH_MS,
});

export function useShares(appId: string, lockId: string) {
  return useQuery(sharesQuery(appId, lockId));
}

export function useAddShare(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateLockShare) => addShare(appId, lockId, body),
    // The share's log entry too (the live stream brings it as well; the cache keeps one copy).
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: lockKeys.shares(appId, lockId) }),
        queryClient.invalidateQueries({ queryKey: lockKeys.log(appId, lockId) }),
      ]),
  });
}

export function useRevokeShare(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => revokeShare(appId, lockId, userId),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: lockKeys.shares(appId, lockId) }),
        queryClient.invalidateQueries({ queryKey: lockKeys.log(appId, lockId) }),
      ]),
  });
}
