import { directoryResultSchema, ownerSchema, type DirectoryResult, type Owner } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { ApiError, request } from '../../lib/http';
import { applicationKeys } from './api';

const ownerPath = (id: string) => `/platform/application/${encodeURIComponent(id)}/owner`;

export async function listOwners(id: string): Promise<Owner[]> {
  const res = await request(ownerPath(id));
  return z.array(ownerSchema).parse(await res.json());
}

/** Directory lookup by email; null when there is no such user (404), other failures throw. */
export async function queryDirectory(email: string): Promise<DirectoryResult | null> {
  try {
    const res = await request('/directory/query', { method: 'POST', body: { email } });
    return directoryResultSchema.parse(await res.json());
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export async function addOwner(id: string, userId: string): Promise<void> {
  await request(ownerPath(id), { method: 'POST', body: { userId } });
}

export async function removeOwner(id: string, userId: string): Promise<void> {
  await request(ownerPath(id), { method: 'DELETE', body: { userId } });
}

/**
 * Fresh for a few seconds, so a list the application shell prefetched is not fetched again when the
 * overview mounts (changes made here invalidate it at once).
 */
export const ownersQuery = (id: string) => ({ queryKey: applicationKeys.owners(id), queryFn: () => listOwners(id), staleTime: 5_000 });

export function useOwners(id: string) {
  return useQuery(ownersQuery(id));
}

export type AddOwnerResult = 'added' | 'not-found';

export function useAddOwner(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (email: string): Promise<AddOwnerResult> => {
      const user = await queryDirectory(email);
      if (!user?.id) return 'not-found';
      await addOwner(id, user.id);
      return 'added';
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationKeys.detail(id) }),
  });
}

/**
 * An owner who has no account yet: the platform emails them an invitation (POST /account/invite, in the
 * inviter's language), which makes them a pending user the directory finds; they are added as an owner
 * at once and open the application once they have chosen a password.
 */
export async function inviteOwner(id: string, email: string): Promise<void> {
  await request('/account/invite', { method: 'POST', body: { email } });
  const user = await queryDirectory(email);
  if (!user?.id) throw new ApiError(404, 'The user with that email address has not been found');
  await addOwner(id, user.id);
}

export function useInviteOwner(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (email: string) => inviteOwner(id, email),
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationKeys.detail(id) }),
  });
}

export function useRemoveOwner(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => removeOwner(id, userId),
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationKeys.detail(id) }),
  });
}
