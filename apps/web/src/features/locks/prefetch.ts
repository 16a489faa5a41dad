import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { matchPath } from 'react-router';

/**
 * On a lock's page, its lock, shares and (unfiltered) activity start loading with the application, from
 * the shell, instead of one after the other once each card mounts: the page then draws once, with all of
 * them (docs/performance.md, Lighthouse on every page).
 */
export function usePrefetchLockPage(pathname: string, search: string) {
  const queryClient = useQueryClient();
  const match = matchPath('/:appId/locks/:lockId', pathname);
  const appId = match?.params.appId;
  const lockId = match?.params.lockId;
  const filtered = /[?&](from|to)=/.test(search);
  useEffect(() => {
    if (!appId || !lockId) return;
    // The queries' modules are fetched here, on a lock's page only (its own chunk needs them too): they build
    // the contract's lock schemas when evaluated, which the shell's other pages would build for nothing.
    void Promise.all([import('./api'), import('./shares-api'), import('./log-api')]).then(([api, shares, log]) => {
      void queryClient.prefetchQuery(api.lockQuery(appId, lockId));
      void queryClient.prefetchQuery(shares.sharesQuery(appId, lockId));
      if (!filtered) void queryClient.prefetchInfiniteQuery(log.lockLogQuery(appId, lockId, {}));
    });
  }, [queryClient, appId, lockId, filtered]);
}
