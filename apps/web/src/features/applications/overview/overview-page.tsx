import type { Application } from '@latchkey/contract';
import { Box, Typography } from '@mui/material';
import { useDeferredValue } from 'react';
import { useTranslation } from 'react-i18next';
import { useOutletContext } from 'react-router';
import { visuallyHidden } from '../../../components/ui/visually-hidden';
import { UnfinishedSetup } from '../components/unfinished-setup';
import { ApplicationCard } from './application-card';
import { AuthenticationCard } from './authentication-card';
import { CompanyUrlsCard } from './company-urls-card';
import { EmailBrandingCard } from './email-branding-card';
import { RemoveApplicationCard } from './remove-application-card';

/**
 * The overview: five stacked cards. The shell has already loaded the application and hands it down
 * (a second query observer here would refetch it on mount, and re-render the page synchronously when
 * that refetch starts).
 * The cards mount in a deferred render, which React time-slices (it yields to the browser every few ms),
 * rather than in the render of the data's arrival, which runs at sync priority as one long task on a slow
 * phone (docs/performance.md).
 */
export function OverviewPage() {
  const { t } = useTranslation();
  const app = useOutletContext<Application>();
  const ready = useDeferredValue(true, false);
  if (!ready) return null;
  return (
    <>
      {/* The page's heading for screen readers; sighted users see the section tab and the card titles. */}
      <Typography variant="h1" sx={visuallyHidden}>
        {t('overview.pageHeading', { name: app.name })}
      </Typography>
      <UnfinishedSetup app={app} />
      {/* From lg up, two columns: the application's details beside its authentication. */}
      <Box sx={{ display: { lg: 'grid' }, gridTemplateColumns: { lg: 'minmax(0, 1fr) minmax(0, 1fr)' }, columnGap: 3, alignItems: 'start' }}>
        <Box>
          <ApplicationCard app={app} />
          <CompanyUrlsCard app={app} />
        </Box>
        <AuthenticationCard app={app} />
      </Box>
      <EmailBrandingCard app={app} />
      <RemoveApplicationCard applicationId={app.applicationId} />
    </>
  );
}
