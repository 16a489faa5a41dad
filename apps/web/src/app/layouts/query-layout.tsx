import { QueryClientProvider } from '@tanstack/react-query';
import { Outlet } from 'react-router';
import { createQueryClient } from '../query-client';

/** The page's one cache: /register and the signed-in area share it, so data outlives a layout change. */
export const queryClient = createQueryClient();

/**
 * Pathless layout around every route that reads the API through TanStack Query. It is a lazy route of
 * its own so that /login, which does not, loads no query code.
 */
export function QueryLayout() {
  return (
    <QueryClientProvider client={queryClient}>
      <Outlet />
    </QueryClientProvider>
  );
}
