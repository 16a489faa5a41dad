import { portalConfigSchema, type PortalConfig } from '@latchkey/contract';
import { useQuery } from '@tanstack/react-query';
import { request } from './http';

export const configKey = ['config'] as const;

export async function fetchConfig(): Promise<PortalConfig> {
  const res = await request('/config', { auth: false });
  return portalConfigSchema.parse(await res.json());
}

/** Deployment config (privacy policy, upload and CDN bases, docs link), read once per page load. */
export const configQuery = { queryKey: configKey, queryFn: fetchConfig, staleTime: Infinity, gcTime: Infinity };

export function usePortalConfig() {
  return useQuery(configQuery);
}
