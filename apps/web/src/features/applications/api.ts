import {
  applicationListSchema,
  applicationSchema,
  type Application,
  type CreateApplication,
  type UpdateApplication,
} from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { request } from '../../lib/http';

export const applicationKeys = {
  all: ['applications'] as const,
  detail: (id: string) => ['applications', id] as const,
  owners: (id: string) => ['applications', id, 'owners'] as const,
};

const appPath = (id: string) => `/platform/application/${encodeURIComponent(id)}`;

export async function listApplications(): Promise<Application[]> {
  const res = await request('/platform/application');
  return applicationListSchema.parse(await res.json());
}

export async function getApplication(id: string): Promise<Application> {
  const res = await request(appPath(id));
  return applicationSchema.parse(await res.json());
}

/** The new id is the last path segment of the Location header of the 201. */
export function idFromLocation(location: string | null): string {
  const id = location?.replace(/\/+$/, '').split('/').pop();
  if (!id) throw new Error('The server did not return the new application id');
  return decodeURIComponent(id);
}

export async function createApplication(body: CreateApplication): Promise<string> {
  const res = await request('/platform/application', { method: 'POST', body });
  return idFromLocation(res.headers.get('Location'));
}

export async function updateApplication(id: string, body: UpdateApplication): Promise<void> {
  await request(appPath(id), { method: 'POST', body });
}

export async function deleteApplication(id: string): Promise<void> {
  await request(appPath(id), { method: 'DELETE' });
}

export function useApplications() {
  return useQuery({ queryKey: applicationKeys.all, queryFn: listApplications });
}

export const applicationQuery = (id: string) => ({ queryKey: applicationKeys.detail(id), queryFn: () => getApplication(id) });

export function useApplication(id: string | undefined) {
  return useQuery({ ...applicationQuery(id ?? ''), enabled: id !== undefined && id !== '' });
}

/** Partial update; the caller passes only what changed. Reloads the application afterwards. */
export function useUpdateApplication(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateApplication) => updateApplication(id, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationKeys.all }),
  });
}

export function useDeleteApplication(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteApplication(id),
    // Only the list: the open overview keeps its (now stale) data until the user leaves for /start.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationKeys.all, exact: true }),
  });
}
