import { portalConfigSchema, type PortalConfig } from '@latchkey/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { request } from './http';

export const configKey = ['config'] as const;

export async function fetchConfig(): Promise<PortalConfig> {
  const res = await request('/config', { auth: false });
  return portalConfigSchema.parse(await res.json());
}

const configQuery = { queryKey: configKey, queryFn: fetchConfig, staleTime: Infinity, gcTime: Infinity };

/** Deployment config (privacy policy, upload and CDN bases, docs link), read once per page load. */
export function usePortalConfig() {
  return useQuery(configQuery);
}

/** Starts loading the config before the screens that read it mount (the application shell's tabs do). */
export function usePrefetchPortalConfig() {
  const queryClient = useQueryClient();
  useEffect(() => {
    void queryClient.prefetchQuery(configQuery);
  }, [queryClient]);
}
