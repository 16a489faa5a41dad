import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { useNavigate } from 'react-router';
import { paths } from '../../lib/paths';
import { request } from '../../lib/http';
import { clearSession } from '../../lib/session';

// Apart from ./api.ts, which the sign-in screens load: logging out needs the query cache, which /login does
// not load (bench/bundle-size.mjs weighs what it does).

export async function destroyToken(): Promise<void> {
  await request('/auth/token/destroy', { method: 'POST' });
}

/** Sign out everywhere: ends every session of the user on the server, this one included. */
export async function destroyAllTokens(): Promise<void> {
  await request('/auth/token/destroy/all', { method: 'POST' });
}

/**
 * Logout: end the server session (best effort), clear all browser storage, go to login. With
 * `everywhere`, every session of the user ends (other browsers and devices too), not just this one.
 */
export function useLogout(): (options?: { everywhere?: boolean }) => Promise<void> {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return useCallback(
    async (options?: { everywhere?: boolean }) => {
      try {
        await (options?.everywhere ? destroyAllTokens() : destroyToken());
      } catch {
        // An already-dead session is still a logout.
      }
      clearSession();
      queryClient.clear();
      await navigate(paths.login, { replace: true });
    },
    [navigate, queryClient],
  );
}
