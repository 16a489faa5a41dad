import type { PublicJwk } from '@latchkey/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../../lib/http';
import { applicationKeys } from './api';

const base = (id: string) => `/platform/application/${encodeURIComponent(id)}`;

export const addAuthKey = (id: string, key: PublicJwk) => request(`${base(id)}/auth/key`, { method: 'POST', body: key });
export const removeAuthKey = (id: string, kid: string) =>
  request(`${base(id)}/auth/key`, { method: 'DELETE', body: { kid } });

/**
 * Replacing a key (the edit dialog). The API has no update call, so: a new kid is added before the
 * old one is removed (no moment without a key); the same kid is removed and re-added, and if the
 * add fails the old key is put back so a failed edit never loses the key.
 */
export async function replaceAuthKey(id: string, oldKey: PublicJwk, next: PublicJwk): Promise<void> {
  if (next.kid !== oldKey.kid) {
    await addAuthKey(id, next);
    await removeAuthKey(id, oldKey.kid);
    return;
  }
  await removeAuthKey(id, oldKey.kid);
  try {
    await addAuthKey(id, next);
  } catch (e) {
    await addAuthKey(id, oldKey).catch(() => undefined);
    throw e;
  }
}

export type DomainKind = 'auth' | 'cors';
const domainPath = (id: string, kind: DomainKind) => `${base(id)}/${kind === 'auth' ? 'auth/issuer' : 'cors'}`;

/** `discovery` (auth domains only): the platform loads the issuer's OpenID configuration and keys first. */
export const addDomain = (id: string, kind: DomainKind, url: string, discovery = false) =>
  request(domainPath(id, kind), { method: 'POST', body: kind === 'auth' && discovery ? { url, discovery: true } : { url } });
export const removeDomain = (id: string, kind: DomainKind, url: string) =>
  request(domainPath(id, kind), { method: 'DELETE', body: { url } });

export type AuthItemAction =
  | { type: 'add-key'; key: PublicJwk }
  | { type: 'replace-key'; oldKey: PublicJwk; key: PublicJwk }
  | { type: 'remove-key'; kid: string }
  | { type: 'add-domain'; kind: DomainKind; url: string; discovery?: boolean }
  | { type: 'remove-domain'; kind: DomainKind; url: string };

async function run(id: string, action: AuthItemAction): Promise<void> {
  switch (action.type) {
    case 'add-key':
      await addAuthKey(id, action.key);
      return;
    case 'replace-key':
      return replaceAuthKey(id, action.oldKey, action.key);
    case 'remove-key':
      await removeAuthKey(id, action.kid);
      return;
    case 'add-domain':
      await addDomain(id, action.kind, action.url, action.discovery);
      return;
    case 'remove-domain':
      await removeDomain(id, action.kind, action.url);
  }
}

/** Every key/domain change reloads the application afterwards, success or not (a replace may half-apply). */
export function useAuthItemAction(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: AuthItemAction) => run(id, action),
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationKeys.detail(id) }),
  });
}
