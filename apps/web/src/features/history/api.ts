import { historyPageSchema, type HistoryKind, type HistoryPage } from '@latchkey/contract';
import { useInfiniteQuery } from '@tanstack/react-query';
import { request } from '../../lib/http';

export interface HistoryFilter {
  kind?: HistoryKind;
  /** An owner's user id. */
  actor?: string;
}

/** Under the application's key, so a change made anywhere in the portal (which invalidates it) shows here. */
export const historyKeys = {
  all: (appId: string) => ['applications', appId, 'history'] as const,
  list: (appId: string, filter: HistoryFilter) => ['applications', appId, 'history', filter] as const,
};

export async function listHistory(appId: string, filter: HistoryFilter, cursor?: string): Promise<HistoryPage> {
  const query = new URLSearchParams();
  if (filter.kind) query.set('kind', filter.kind);
  if (filter.actor) query.set('actor', filter.actor);
  if (cursor) query.set('cursor', cursor);
  const qs = query.toString();
  const res = await request(`/platform/application/${encodeURIComponent(appId)}/history${qs ? `?${qs}` : ''}`);
  return historyPageSchema.parse(await res.json());
}

/** Newest first, a cursor per page; each filter pages on its own. */
export function useHistory(appId: string, filter: HistoryFilter) {
  return useInfiniteQuery({
    queryKey: historyKeys.list(appId, filter),
    queryFn: ({ pageParam }) => listHistory(appId, filter, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchOnWindowFocus: 'always',
  });
}
