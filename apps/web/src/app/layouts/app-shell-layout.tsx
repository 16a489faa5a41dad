import { Box, Button, ButtonBase, Container, type SxProps, type Theme } from '@mui/material';
import { usePrefetchQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, Link as RouterLink, useLocation, useParams } from 'react-router';
import { PageLoader } from '../../components/ui/page-loader';
import { useApplication } from '../../features/applications/api';
import { ownersQuery } from '../../features/applications/owners-api';
import { usePrefetchHistoryPage } from '../../features/history/prefetch';
import { usePrefetchLockPage } from '../../features/locks/prefetch';
import { configQuery } from '../../lib/config';
import { ApiError } from '../../lib/http';
import { setSessionValue } from '../../lib/session';
import { paths } from '../../lib/paths';
import { RetryAlert } from '../../components/ui/retry-alert';

const SECTIONS = ['overview', 'locks', 'outbox', 'getting-started', 'settings', 'webhooks', 'history'] as const;
type Section = (typeof SECTIONS)[number];

/** Which section the URL selects (a lock's page is in Locks); a route of the shell outside them selects none. */
export function activeTab(pathname: string): Section | false {
  const section = pathname.split('/')[2];
  return SECTIONS.find((s) => s === section) ?? false;
}

/** A section link drawn as a tab: MUI's tab look, with the active one underlined. */
const sectionLinkSx: SxProps<Theme> = (theme) => ({
  ...theme.typography.button,
  minWidth: { xs: 0, sm: 90 },
  minHeight: 48,
  px: { xs: 1.25, sm: 2 },
  whiteSpace: 'nowrap',
  flexShrink: 0,
  py: 1.5,
  color: 'text.secondary',
  '&:hover': { color: 'text.primary' },
  '&.Mui-focusVisible': { bgcolor: 'action.focus' },
  '&[aria-current="page"]': { color: 'primary.main', boxShadow: `inset 0 -2px 0 ${theme.palette.primary.main}` },
});

/**
 * The shell's sections as links in a navigation landmark, the current one marked `aria-current="page"`.
 * Not MUI's Tabs: those measure their indicator after mounting, a forced layout of the whole page in the
 * overview's load (docs/performance.md), and a tab list is the pattern for panels on one page, not for
 * links between pages.
 */
function SectionLinks({ appId, tab }: { appId: string; tab: ReturnType<typeof activeTab> }) {
  const { t } = useTranslation();
  const sections = [
    { value: 'overview', label: t('nav.overview'), to: paths.overview(appId) },
    { value: 'locks', label: t('nav.locks'), to: paths.appLocks(appId) },
    { value: 'outbox', label: t('nav.outbox'), to: paths.outbox(appId) },
    { value: 'getting-started', label: t('nav.gettingStarted'), to: paths.gettingStarted(appId) },
    { value: 'settings', label: t('nav.partnerUsers'), to: paths.settings(appId) },
    { value: 'webhooks', label: t('nav.webhooks'), to: paths.webhooks(appId) },
    { value: 'history', label: t('nav.history'), to: paths.history(appId) },
  ] as const;
  // On a phone the sections are one row that scrolls sideways (wrapped, German took three rows): the
  // current one is brought into view, and the one cut at the edge shows there are more.
  const row = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const container = row.current;
    const current = container?.querySelector<HTMLElement>('[aria-current="page"]');
    if (!container || !current || container.scrollWidth <= container.clientWidth) return;
    container.scrollLeft = current.offsetLeft - (container.clientWidth - current.offsetWidth) / 2;
  }, [tab]);
  return (
    <Box component="nav" aria-label={t('nav.applicationTabs')} sx={{ bgcolor: 'background.paper', borderBottom: 1, borderColor: 'grey.300' }}>
      <Container
        ref={row}
        maxWidth="lg"
        sx={{ display: 'flex', flexWrap: 'nowrap', overflowX: 'auto', scrollbarWidth: 'thin', position: 'relative', px: { xs: 1, sm: 2, md: 3 } }}
      >
        {sections.map((section) => (
          <ButtonBase
            key={section.value}
            component={RouterLink}
            to={section.to}
            aria-current={tab === section.value ? 'page' : undefined}
            sx={sectionLinkSx}
          >
            {section.label}
          </ButtonBase>
        ))}
      </Container>
    </Box>
  );
}

/**
 * The application could not be loaded: the server's message, a way back to the list, and — unless the
 * application is not there for this user (a 4xx will not heal) — a retry.
 */
function ApplicationLoadError({ error, onRetry }: { error: Error; onRetry: () => void }) {
  const { t } = useTranslation();
  const lasting = error instanceof ApiError && error.status >= 400 && error.status < 500;
  return (
    <>
      <RetryAlert error={error} onRetry={lasting ? undefined : onRetry} sx={{ mb: 2 }} />
      <Button variant="contained" component={RouterLink} to={paths.start}>
        {t('nav.backToStart')}
      </Button>
    </>
  );
}

/**
 * The application shell: section tabs that follow the URL.
 * The application is loaded by :appId and passed down.
 */
export function AppShellLayout() {
  const { appId = '' } = useParams();
  const { pathname, search } = useLocation();
  const app = useApplication(appId);
  // What the tabs' screens read besides the application (the overview's owners and logo limits, Getting
  // Started's docs link) starts loading alongside it rather than once those screens mount.
  usePrefetchQuery(ownersQuery(appId));
  usePrefetchQuery(configQuery);
  usePrefetchLockPage(pathname, search);
  usePrefetchHistoryPage(pathname, search);

  useEffect(() => {
    if (app.data) setSessionValue('appId', app.data.applicationId);
  }, [app.data]);

  return (
    <>
      {!app.isError && <SectionLinks appId={appId} tab={activeTab(pathname)} />}
      <Container component="main" maxWidth="lg" sx={{ py: { xs: 2, md: 4 }, px: { xs: 1, sm: 2, md: 3 } }}>
        {app.isPending && <PageLoader />}
        {app.isError && <ApplicationLoadError error={app.error} onRetry={() => void app.refetch()} />}
        {/* The loaded application is handed to the child screens (Getting Started reads it). */}
        {app.data && <Outlet context={app.data} />}
      </Container>
    </>
  );
}
