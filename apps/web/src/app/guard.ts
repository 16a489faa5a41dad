import { redirect, type LoaderFunctionArgs } from 'react-router';
import { refreshSession } from '../lib/http';
import { checkSession } from '../lib/session-check';
import { paths } from './paths';

/**
 * Spec §2 navigation guard, run before every protected navigation: a failed token check goes to
 * /login; a token that had to be refreshed goes to the 'locks' route (here /start).
 */
export async function protectedLoader({ request }: LoaderFunctionArgs): Promise<null> {
  const status = await checkSession(refreshSession);
  if (status === 'logged-out') throw redirect(paths.login);
  if (status === 'refreshed' && new URL(request.url).pathname !== paths.locks) throw redirect(paths.locks);
  return null;
}

/** Re-check on every navigation, not only when params change: tokens expire while the tab is open. */
export const alwaysRevalidate = () => true;
