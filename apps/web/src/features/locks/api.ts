import { lockSchema, type CreateLock, type Lock, type UpdateLock } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';

/**
 * Under the application's own key, so whatever reloads the application reaches its locks too. Details,
 * shares and logs sit beside the list (not under it), so refreshing one lock's shares leaves the rest.
 */
export const lockKeys = {
  all: (appId: string) => ['applications', appId, 'locks'] as const,
  list: (appId: string) => ['applications', appId, 'locks', 'list'] as const,
  detail: (appId: string, lockId: string) => ['applications', appId, 'locks', 'detail', lockId] as const,
  shares: (appId: string, lockId: string) => ['applications', appId, 'locks', 'shares', lockId] as const,
  log: (appId: string, lockId: string) => ['applications', appId, 'locks', 'log', lockId] as const,
};

/**
 * How long a lock's shares, log, access codes and tiles just read count as current. The lock page reads them
 * as it opens and its cards draw that read instead of each reading them again as it mounts (live events and
 * every change made here keep them current): an answer landing while a card renders would redo that render
 * synchronously, a long task on a slow phone.
 */
export const LOCK_PAGE_FRESH_MS = 10_000;

export const locksPath = (appId: string) => `/platform/application/${encodeURIComponent(appId)}/lock`;
export const lockPath = (appId: string, lockId: string) =>
  `${locksPath(appId)}/${encodeURIComponent(lockId)}`;

const lockListSchema = z.array(lockSchema);

export async function listLocks(appId: string): Promise<Lock[]> {
  const res = await request(locksPath(appId));
  return lockListSchema.parse(await res.json());
}

export async function getLock(appId: string, lockId: string): Promise<Lock> {
  const res = await request(lockPath(appId, lockId));
  return lockSchema.parse(await res.json());
}

export async function createLock(appId: string, body: CreateLock): Promise<Lock> {
  const res = await request(locksPath(appId), { method: 'POST', body });
  return lockSchema.parse(await res.json());
}

/** Only the fields that changed are sent; the answer is the lock as stored. */
export async function updateLock(appId: string, lockId: string, body: UpdateLock): Promise<Lock> {
  const res = await request(lockPath(appId, lockId), { method: 'PUT', body });
  return res.status === 204 ? getLock(appId, lockId) : lockSchema.parse(await res.json());
}

export async function deleteLock(appId: string, lockId: string): Promise<void> {
  await request(lockPath(appId, lockId), { method: 'DELETE' });
}

/** One lock as it now is, written into the list and its detail (a save's answer, or a live event). */
export function storeLock(queryClient: QueryClient, lock: Lock): void {
  const appId = lock.applicationId;
  queryClient.setQueryData<Lock[]>(lockKeys.list(appId), (list) => {
    if (!list) return list;
    return list.some((l) => l.id === lock.id)
      ? list.map((l) => (l.id === lock.id ? lock : l))
      : [...list, lock];
  });
  queryClient.setQueryData(lockKeys.detail(appId, lock.id), lock);
}

export const locksQuery = (appId: string) => ({
  queryKey: lockKeys.list(appId),
  queryFn: () => listLocks(appId),
});

export function useLocks(appId: string) {
  return useQuery(locksQuery(appId));
}

export const lockQuery = (appId: string, lockId: string) => ({
  queryKey: lockKeys.detail(appId, lockId),
  queryFn: () => getLock(appId, lockId),
});

/** One lock; drawn at once from the list when the list has been loaded. */
export function useLock(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useQuery({
    ...lockQuery(appId, lockId),
    initialData: () => queryClient.getQueryData<Lock[]>(lockKeys.list(appId))?.find((l) => l.id === lockId),
  });
}

export function useCreateLock(appId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateLock) => createLock(appId, body),
    onSuccess: (lock) => storeLock(queryClient, lock),
  });
}

export function useUpdateLock(appId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ lockId, body }: { lockId: string; body: UpdateLock }) => updateLock(appId, lockId, body),
    onSuccess: (lock) => storeLock(queryClient, lock),
  });
}

export function useDeleteLock(appId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (lockId: string) => deleteLock(appId, lockId),
    onSuccess: (_void, lockId) => {
      queryClient.setQueryData<Lock[]>(lockKeys.list(appId), (list) => list?.filter((l) => l.id !== lockId));
      queryClient.removeQueries({ queryKey: lockKeys.detail(appId, lockId) });
    },
  });
}
