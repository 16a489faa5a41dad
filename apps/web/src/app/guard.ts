import { redirect, type LoaderFunctionArgs } from 'react-router';
import { refreshSession } from '../lib/http';
import { checkSession } from '../lib/session-check';
import { paths } from './paths';

/**
 * Spec §2 navigation guard, run before every protected navigation: a failed token check goes to
 * /login; a token that had to be refreshed goes to the 'locks' route (here /start).
 */
export async function protectedLoader({ request, params }: LoaderFunctionArgs): Promise<null> {
  const status = await checkSession(refreshSession);
  if (status === 'logged-out') throw redirect(paths.login);
  if (status === 'refreshed' && new URL(request.url).pathname !== paths.locks) throw redirect(paths.locks);
  if (params.appId) void preloadApplication(params.appId);
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
