import { HISTORY_KINDS, historyActorSchema, historyPageSchema, type HistoryActor, type HistoryKind, type HistoryPage } from '@latchkey/contract';
import { infiniteQueryOptions, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';

export interface HistoryFilter {
  kind?: HistoryKind;
  /** A user id, or an email for an actor without one. */
  actor?: string;
}

const isKind = (value: string | null): value is HistoryKind => HISTORY_KINDS.includes(value as HistoryKind);

/** The filter a History address asks for (`?kind=&actor=`); an unknown kind is no filter. */
export function filterFromParams(params: URLSearchParams): HistoryFilter {
  const kind = params.get('kind');
  const actor = params.get('actor');
  return { ...(isKind(kind) ? { kind } : {}), ...(actor ? { actor } : {}) };
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
export const historyQuery = (appId: string, filter: HistoryFilter) =>
  infiniteQueryOptions({
    queryKey: historyKeys.list(appId, filter),
    queryFn: ({ pageParam }) => listHistory(appId, filter, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchOnWindowFocus: 'always',
  });

export function useHistory(appId: string, filter: HistoryFilter) {
  return useInfiniteQuery(historyQuery(appId, filter));
}

export async function listHistoryActors(appId: string): Promise<HistoryActor[]> {
  const res = await request(`/platform/application/${encodeURIComponent(appId)}/history/actors`);
  return z.array(historyActorSchema).parse(await res.json());
}

/** Everyone who appears in the history (former owners too): the actor filter's choices. */
export const historyActorsQuery = (appId: string) =>
  queryOptions({ queryKey: historyKeys.actors(appId), queryFn: () => listHistoryActors(appId), refetchOnWindowFocus: 'always' });

export function useHistoryActors(appId: string) {
  return useQuery(historyActorsQuery(appId));
}
