import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { matchPath } from 'react-router';
import { lockQuery } from './api';
import { lockLogQuery } from './log-api';
import { sharesQuery } from './shares-api';

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
    void queryClient.prefetchQuery(lockQuery(appId, lockId));
    void queryClient.prefetchQuery(sharesQuery(appId, lockId));
    if (!filtered) void queryClient.prefetchInfiniteQuery(lockLogQuery(appId, lockId, {}));
  }, [queryClient, appId, lockId, filtered]);
}
