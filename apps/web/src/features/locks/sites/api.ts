import { ownerSiteSchema, type OwnerSite } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../../lib/http';
import { lockPath } from '../api';

export const siteKeys = { list: (appId: string) => ['applications', appId, 'sites'] as const };
const sitesPath = (appId: string) => `/platform/application/${encodeURIComponent(appId)}/site`;

export async function listSites(appId: string): Promise<OwnerSite[]> {
  const res = await request(sitesPath(appId));
  return z.array(ownerSiteSchema).parse(await res.json());
}

export function useSites(appId: string) {
  return useQuery({ queryKey: siteKeys.list(appId), queryFn: () => listSites(appId) });
}

/** Every change answers with the sites reloaded: a lock moved out of one site is in the other's list at once. */
function useSiteChange<T>(appId: string, fn: (input: T) => Promise<unknown>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: siteKeys.list(appId) }),
  });
}

export const useCreateSite = (appId: string) =>
  useSiteChange(appId, (name: string) => request(sitesPath(appId), { method: 'POST', body: { name } }));
export const useRenameSite = (appId: string) =>
  useSiteChange(appId, ({ siteId, name }: { siteId: string; name: string }) =>
    request(`${sitesPath(appId)}/${encodeURIComponent(siteId)}`, { method: 'PUT', body: { name } }),
  );
export const useDeleteSite = (appId: string) =>
  useSiteChange(appId, (siteId: string) =>
    request(`${sitesPath(appId)}/${encodeURIComponent(siteId)}`, { method: 'DELETE' }),
  );
export const useMoveLock = (appId: string) =>
  useSiteChange(appId, ({ lockId, siteId }: { lockId: string; siteId: string | null }) =>
    request(`${lockPath(appId, lockId)}/site`, { method: 'PUT', body: { siteId } }),
  );
