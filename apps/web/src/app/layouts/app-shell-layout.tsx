import { Alert, Box, Container, Tab, Tabs } from '@mui/material';
import { usePrefetchQuery } from '@tanstack/react-query';
import { memo, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, Link as RouterLink, useLocation, useParams } from 'react-router';
import { PageLoader } from '../../components/ui/page-loader';
import { useApplication } from '../../features/applications/api';
import { ownersQuery } from '../../features/applications/owners-api';
import { configQuery } from '../../lib/config';
import { errorMessage } from '../../lib/http';
import { setSessionValue } from '../../lib/session';
import { paths } from '../paths';

/** Which tab the URL selects; other routes of the shell (settings) select none. */
export function activeTab(pathname: string): 'overview' | 'getting-started' | false {
  const section = pathname.split('/')[2];
  return section === 'overview' || section === 'getting-started' ? section : false;
}

/**
 * The shell's tabs, re-rendered only when the route changes: MUI's Tabs measure their indicator after every
 * render (a forced layout), so they must not re-render when the application's data arrives.
 */
const ShellTabs = memo(function ShellTabs({ appId, tab }: { appId: string; tab: ReturnType<typeof activeTab> }) {
  const { t } = useTranslation();
  return (
    <Box component="nav" aria-label={t('nav.applicationTabs')} sx={{ bgcolor: 'background.paper', borderBottom: 1, borderColor: 'grey.300' }}>
      <Container maxWidth="lg">
        <Tabs value={tab}>
          <Tab label={t('nav.overview')} value="overview" component={RouterLink} to={paths.overview(appId)} />
          <Tab label={t('nav.gettingStarted')} value="getting-started" component={RouterLink} to={paths.gettingStarted(appId)} />
        </Tabs>
      </Container>
    </Box>
  );
});

/** Spec §2 application shell: tabs that follow the URL; the application is loaded by :appId and passed down. */
export function AppShellLayout() {
  const { appId = '' } = useParams();
  const { pathname } = useLocation();
  const app = useApplication(appId);
  // What the tabs' screens read besides the application (the overview's owners and logo limits, Getting
  // Started's docs link) starts loading alongside it rather than once those screens mount.
  usePrefetchQuery(ownersQuery(appId));
  usePrefetchQuery(configQuery);

  useEffect(() => {
    if (app.data) setSessionValue('appId', app.data.applicationId);
  }, [app.data]);

  return (
    <>
      <ShellTabs appId={appId} tab={activeTab(pathname)} />
      <Container component="main" maxWidth="lg" sx={{ py: { xs: 2, md: 4 }, px: { xs: 1, sm: 2, md: 3 } }}>
        {app.isPending && <PageLoader />}
        {app.isError && <Alert severity="error">{errorMessage(app.error)}</Alert>}
        {/* The loaded application is handed to the child screens (Getting Started reads it). */}
        {app.data && <Outlet context={app.data} />}
      </Container>
    </>
  );
}
