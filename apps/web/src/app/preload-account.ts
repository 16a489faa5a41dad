import { accountQuery } from '../features/auth/account-query';
import { configQuery } from '../lib/config';

/**
 * The account (is its email verified?) and the portal's config (is there an SMTP server?) before the first
 * signed-in page is drawn, loaded while the page's code loads: the verification banner then comes whole
 * with the page instead of pushing it down once they answer (a layout shift on every page). Later
 * navigations draw at once with what is cached; a failure leaves the banner to its own query.
 */
export async function preloadAccount(): Promise<void> {
  // The query layout stays a chunk of its own (the pages' bundles are measured by it).
  const { queryClient } = await import('./layouts/query-layout');
  await Promise.all([
    queryClient.getQueryData(accountQuery.queryKey) === undefined && queryClient.prefetchQuery(accountQuery),
    queryClient.getQueryData(configQuery.queryKey) === undefined && queryClient.prefetchQuery(configQuery),
  ]);
}
