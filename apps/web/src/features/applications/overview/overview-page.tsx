import type { Application } from '@latchkey/contract';
import { useDeferredValue } from 'react';
import { useParams } from 'react-router';
import { useApplication } from '../api';
import { ApplicationCard } from './application-card';
import { AuthenticationCard } from './authentication-card';
import { CompanyUrlsCard } from './company-urls-card';
import { EmailBrandingCard } from './email-branding-card';
import { RemoveApplicationCard } from './remove-application-card';

/**
 * Spec §2 overview: five stacked cards. The shell has already loaded the application.
 * The first card paints at once; the four below it mount in a deferred, time-sliced render (React yields
 * to the browser every few ms), so a slow phone never sees one long main-thread task (docs/performance.md).
 */
export function OverviewPage() {
  const { appId = '' } = useParams();
  const app = useApplication(appId).data;
  const showAll = useDeferredValue(true, false);
  if (!app) return null;
  return (
    <>
      <ApplicationCard app={app} />
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
