import { historyActorSchema, historyPageSchema, type HistoryActor, type HistoryKind, type HistoryPage } from '@latchkey/contract';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';

export interface HistoryFilter {
  kind?: HistoryKind;
  /** A user id, or an email for an actor without one. */
  actor?: string;
}

/** Under the application's key, so a change made anywhere in the portal (which invalidates it) shows here. */
export const historyKeys = {
  all: (appId: string) => ['applications', appId, 'history'] as const,
  list: (appId: string, filter: HistoryFilter) => ['applications', appId, 'history', filter] as const,
  actors: (appId: string) => ['applications', appId, 'history', 'actors'] as const,
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

export async function listHistoryActors(appId: string): Promise<HistoryActor[]> {
  const res = await request(`/platform/application/${encodeURIComponent(appId)}/history/actors`);
  return z.array(historyActorSchema).parse(await res.json());
}

/** Everyone who appears in the history (former owners too): the actor filter's choices. */
export function useHistoryActors(appId: string) {
  return useQuery({ queryKey: historyKeys.actors(appId), queryFn: () => listHistoryActors(appId), refetchOnWindowFocus: 'always' });
}
