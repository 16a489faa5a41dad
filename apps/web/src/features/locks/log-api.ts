import { lockLogPageSchema, type LockLogEntry, type LockLogPage } from '@latchkey/contract';
import { useInfiniteQuery, type InfiniteData, type QueryClient } from '@tanstack/react-query';
import { request } from '../../lib/http';
import { LOCK_PAGE_FRESH_MS, lockKeys, lockPath } from './api';

export interface LogRange {
  /** Epoch seconds, inclusive. */
  start?: number;
  end?: number;
}

export async function listLog(
  appId: string,
  lockId: string,
  range: LogRange,
  cursor?: string,
): Promise<LockLogPage> {
  const query = new URLSearchParams();
  if (range.start !== undefined) query.set('start', String(range.start));
  if (range.end !== undefined) query.set('end', String(range.end));
  if (cursor) query.set('cursor', cursor);
  const qs = query.toString();
  const res = await request(`${lockPath(appId, lockId)}/log${qs ? `?${qs}` : ''}`);
  return lockLogPageSchema.parse(await res.json());
}

/** Newest first, a cursor per page; the range is part of the key, so each filter pages on its own. */
export const lockLogQuery = (appId: string, lockId: string, range: LogRange) => ({
  queryKey: [...lockKeys.log(appId, lockId), range],
  queryFn: ({ pageParam }: { pageParam: string | undefined }) => listLog(appId, lockId, range, pageParam),
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (last: LockLogPage) => last.nextCursor ?? undefined,
  staleTime: LOCK_PAGE_FRESH_MS,
});

export function useLockLog(appId: string, lockId: string, range: LogRange) {
  return useInfiniteQuery(lockLogQuery(appId, lockId, range));
}

/**
 * A live entry goes on top of every loaded view of its lock's log whose range it falls in (an open-ended
 * one always), once: the stream may repeat an entry after a reconnect.
 */
export function prependLogEntry(queryClient: QueryClient, appId: string, entry: LockLogEntry): void {
  const views = queryClient.getQueriesData<InfiniteData<LockLogPage>>({
    queryKey: lockKeys.log(appId, entry.lockId),
  });
  for (const [key, data] of views) {
    const range = (key[5] ?? {}) as LogRange;
    const inRange =
      (range.start === undefined || entry.timestamp >= range.start) &&
      (range.end === undefined || entry.timestamp <= range.end);
    const first = data?.pages[0];
    if (!data || !first || !inRange || data.pages.some((p) => p.items.some((i) => i.id === entry.id)))
      continue;
    queryClient.setQueryData<InfiniteData<LockLogPage>>(key, {
      ...data,
      pages: [{ ...first, items: [entry, ...first.items] }, ...data.pages.slice(1)],
    });
  }
}
