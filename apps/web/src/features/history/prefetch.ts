import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { matchPath } from 'react-router';

/**
 * On the History page, its entries and actor choices start loading with the application, from the shell,
 * instead of once the page's code has arrived: the page then draws once, with both (docs/performance.md,
 * Lighthouse on every page).
 */
export function usePrefetchHistoryPage(pathname: string, search: string) {
  const queryClient = useQueryClient();
  const appId = matchPath('/:appId/history', pathname)?.params.appId;
  useEffect(() => {
    if (!appId) return;
    // The queries' module is fetched here, on the History page only (its own chunk needs it too): it builds
    // the contract's history schemas when evaluated, which the shell's other pages would build for nothing.
    void import('./api').then(({ filterFromParams, historyActorsQuery, historyQuery }) => {
      void queryClient.prefetchInfiniteQuery(historyQuery(appId, filterFromParams(new URLSearchParams(search))));
      void queryClient.prefetchQuery(historyActorsQuery(appId));
    });
  }, [queryClient, appId, search]);
}
