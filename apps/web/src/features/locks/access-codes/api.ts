import { accessCodeListSchema, accessCodeSchema, type AccessCode, type CreateAccessCode } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { request } from '../../../lib/http';
import { lockPath } from '../api';

/** A lock's access codes sit beside its shares and log, under the application's key. */
export const accessCodeKeys = {
  list: (appId: string, lockId: string) => ['applications', appId, 'locks', 'access-codes', lockId] as const,
};

const codesPath = (appId: string, lockId: string) => `${lockPath(appId, lockId)}/access-code`;

export async function listAccessCodes(appId: string, lockId: string): Promise<AccessCode[]> {
  const res = await request(codesPath(appId, lockId));
  return accessCodeListSchema.parse(await res.json());
}

export async function createAccessCode(appId: string, lockId: string, body: CreateAccessCode): Promise<AccessCode> {
  const res = await request(codesPath(appId, lockId), { method: 'POST', body });
  return accessCodeSchema.parse(await res.json());
}

export async function withdrawAccessCode(appId: string, lockId: string, accessCodeId: string): Promise<void> {
  await request(`${codesPath(appId, lockId)}/${encodeURIComponent(accessCodeId)}`, { method: 'DELETE' });
}

/** How often the list is read again while a code waits for its door to take it (status `setting`). */
const SETTING_POLL_MS = 4000;

/**
 * The lock's codes (and withdrawn offline codes until their end). While one is still being set on its
 * door the list is read again now and then, so it turns to Set without a reload.
 */
export function useAccessCodes(appId: string, lockId: string) {
  return useQuery({
    queryKey: accessCodeKeys.list(appId, lockId),
    queryFn: () => listAccessCodes(appId, lockId),
    refetchInterval: (query) =>
      query.state.data?.some((c) => c.status === 'setting') ? SETTING_POLL_MS : false,
  });
}

export function useCreateAccessCode(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateAccessCode) => createAccessCode(appId, lockId, body),
    onSuccess: (code) => {
      queryClient.setQueryData<AccessCode[]>(accessCodeKeys.list(appId, lockId), (list) =>
        list ? [...list.filter((c) => c.accessCodeId !== code.accessCodeId), code] : list,
      );
      void queryClient.invalidateQueries({ queryKey: accessCodeKeys.list(appId, lockId) });
    },
  });
}

export function useWithdrawAccessCode(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (accessCodeId: string) => withdrawAccessCode(appId, lockId, accessCodeId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accessCodeKeys.list(appId, lockId) }),
  });
}
