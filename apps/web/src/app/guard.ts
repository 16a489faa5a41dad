import { redirect, type LoaderFunctionArgs } from 'react-router';
import { refreshSession } from '../lib/http';
import { loginReturningTo } from '../lib/return-path';
import { checkSession } from '../lib/session-check';

/**
 * The navigation guard, run before every protected navigation: a failed token check goes to /login,
 * which returns to the page asked for after signing in. A token that had to be refreshed stays where it
 * is: going to the 'locks' route instead, as the original portal did, threw the user out of the page (and
 * its unsaved input) after a quarter of an hour idle.
 */
export async function protectedLoader({ request, params }: LoaderFunctionArgs): Promise<null> {
  const status = await checkSession(refreshSession);
  if (status === 'logged-out') {
    const url = new URL(request.url);
    throw redirect(loginReturningTo(url.pathname + url.search + url.hash));
  }
  if (params.appId) void preloadApplication(params.appId);
  // Its own chunk: /login, which loads this guard, carries none of it.
  await import('./preload-account').then((m) => m.preloadAccount());
  return null;
}


/**
 * Starts loading the application a page opens with while its screens' code is still loading, instead of
 * once the shell has mounted (docs/performance.md). Only when it is not cached yet; a failure is left to
 * the shell, whose own query tries again and shows it.
 */
async function preloadApplication(id: string): Promise<void> {
  const [{ queryClient }, { applicationQuery }] = await Promise.all([
    import('./layouts/query-layout'),
    import('../features/applications/api'),
  ]);
  await queryClient.ensureQueryData(applicationQuery(id)).catch(() => undefined);
}

/** Re-check on every navigation, not only when params change: tokens expire while the tab is open. */
export const alwaysRevalidate = () => true;
