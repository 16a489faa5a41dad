import {
  applicationUserListSchema,
  applicationUserSchema,
  type ApplicationUser,
  type ApplicationUserList,
} from '@latchkey/contract';
import { keepPreviousData, useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../../lib/http';

/** Under the application's own key, so anything that reloads the application can reach its users too. */
export const userKeys = {
  all: (id: string) => ['applications', id, 'users'] as const,
  list: (id: string, search: string) => ['applications', id, 'users', { search }] as const,
};

const usersPath = (id: string) => `/platform/application/${encodeURIComponent(id)}/user`;

export async function listUsers(id: string, { search, cursor }: { search?: string; cursor?: string }): Promise<ApplicationUserList> {
  const query = new URLSearchParams();
  if (search) query.set('search', search);
  if (cursor) query.set('cursor', cursor);
  const qs = query.toString();
  const res = await request(qs ? `${usersPath(id)}?${qs}` : usersPath(id));
  return applicationUserListSchema.parse(await res.json());
}

export async function addUser(id: string, email: string): Promise<ApplicationUser> {
  const res = await request(usersPath(id), { method: 'POST', body: { email } });
  return applicationUserSchema.parse(await res.json());
}

export async function removeUser(id: string, userId: string): Promise<void> {
  await request(usersPath(id), { method: 'DELETE', body: { userId } });
}

/** Cursor-paged users, filtered on the server; while a new search loads, the previous rows stay. */
export function useUsers(id: string, search: string) {
  return useInfiniteQuery({
    queryKey: userKeys.list(id, search),
    queryFn: ({ pageParam }) => listUsers(id, { search: search || undefined, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  });
}

export function useAddUser(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (email: string) => addUser(id, email),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.all(id) }),
  });
}

export function useRemoveUser(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => removeUser(id, userId),
    onSettled: () => queryClient.invalidateQueries({ queryKey: userKeys.all(id) }),
  });
}
