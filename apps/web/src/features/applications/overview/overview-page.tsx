import type { Application } from '@latchkey/contract';
import { useDeferredValue } from 'react';
import { useOutletContext } from 'react-router';
import { ApplicationCard } from './application-card';
import { AuthenticationCard } from './authentication-card';
import { CompanyUrlsCard } from './company-urls-card';
import { EmailBrandingCard } from './email-branding-card';
import { RemoveApplicationCard } from './remove-application-card';

/**
 * Spec §2 overview: five stacked cards. The shell has already loaded the application and hands it down
 * (a second query observer here would refetch it on mount, and re-render the page synchronously when
 * that refetch starts).
 * The cards mount in deferred renders, the first card and then the four below it: React time-slices those
 * (it yields to the browser every few ms), where the data's arrival is rendered at sync priority in one
 * task, so a slow phone sees shorter main-thread tasks (docs/performance.md).
 */
export function OverviewPage() {
  const app = useOutletContext<Application>();
  const showFirst = useDeferredValue(true, false);
  const showAll = useDeferredValue(showFirst, false);
  return (
    <>
      {showFirst && <ApplicationCard app={app} />}
      {showAll && <RestOfOverview app={app} />}
    </>
  );
}

function RestOfOverview({ app }: { app: Application }) {
  return (
    <>
      <AuthenticationCard app={app} />
      <CompanyUrlsCard app={app} />
      <EmailBrandingCard app={app} />
      <RemoveApplicationCard applicationId={app.applicationId} />
    </>
  );
}
