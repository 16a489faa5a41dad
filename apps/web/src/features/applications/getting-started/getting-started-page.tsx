import { faArrowUpRightFromSquare } from '@fortawesome/free-solid-svg-icons';
import type { Application } from '@latchkey/contract';
import { Alert, Box, Link, Paper, Tab, Tabs, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useEffect } from 'react';
import { Navigate, Outlet, Link as RouterLink, useLocation, useOutletContext, useParams } from 'react-router';
import { GETTING_STARTED_TABS, PLATFORMS, paths, type GettingStartedTab, type Platform } from '../../../lib/paths';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { visuallyHidden } from '../../../components/ui/visually-hidden';
import { usePortalConfig } from '../../../lib/config';
import { errorMessage } from '../../../lib/http';
import { IntegrationSteps } from './integration-steps';

const TAB_KEY = 'latchkey.gettingStartedTab';
const isTab = (value: unknown): value is GettingStartedTab => (GETTING_STARTED_TABS as readonly unknown[]).includes(value);

function rememberedTab(): GettingStartedTab | null {
  try {
    const stored = localStorage.getItem(TAB_KEY);
    return isTab(stored) ? stored : null;
  } catch {
    return null;
  }
}

/**
 * /getting-started: the tab last looked at, and on a first visit the one that unlocks a lock from the
 * developer's backend, not a platform's.
 */
export function GettingStartedIndex() {
  return <Navigate to={rememberedTab() ?? 'backend'} replace />;
}

/**
 * Getting started: a tab per platform (its own URL) with the spec's sentence, then the steps
 * filled with this application's values. The application comes from the shell, which loaded it.
 */
export function GettingStartedPage() {
  const { t } = useTranslation();
  const { appId = '' } = useParams();
  const { pathname } = useLocation();
  const app = useOutletContext<Application>();
  const config = usePortalConfig();
  const segment = pathname.split('/')[3] ?? '';
  const tab: GettingStartedTab = isTab(segment) ? segment : 'backend';
  const platform: Platform | null = (PLATFORMS as readonly string[]).includes(tab) ? (tab as Platform) : null;
  // The paths that are not an app platform's (the backend's unlock, a real lock) are guides of the locks feature.
  const guideIntro = tab === 'device' ? t('deviceGuide.intro') : t('gettingStarted.backendIntro');
  useEffect(() => {
    if (!isTab(segment)) return;
    try {
      localStorage.setItem(TAB_KEY, segment);
    } catch {
      // Storage blocked: the next visit starts on the backend tab again.
    }
  }, [segment]);

  return (
    <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 }, minWidth: 0 }}>
      {/* The platforms' child routes draw nothing (the index child redirects /getting-started to /ios);
          the backend guide is drawn below, in the tab's body. */}
      {platform && <Outlet />}
      <Typography variant="h1" sx={{ mb: 2 }}>
        {t('gettingStarted.title')}
      </Typography>
      <Tabs value={tab} aria-label={t('gettingStarted.platforms')} variant="scrollable" allowScrollButtonsMobile>
        {GETTING_STARTED_TABS.map((p) => (
          <Tab key={p} value={p} label={t(`gettingStarted.${p}`)} component={RouterLink} to={paths.gettingStartedPlatform(appId, p)} />
        ))}
      </Tabs>
      <Box sx={{ py: 3 }}>
        <Typography>{platform ? t('gettingStarted.intro', { platform: t(`gettingStarted.${platform}`) }) : guideIntro}</Typography>
        {/* The backend and real-lock guides (routes of their own, in the locks feature: they need the application's locks). */}
        {!platform && <Outlet context={app} />}
        {config.isPending && <PageLoader />}
        {config.isError && (
          <Alert severity="error" sx={{ mt: 2 }}>
            {errorMessage(config.error)}
          </Alert>
        )}
        {config.data && platform && <IntegrationSteps app={app} platform={platform} audience={config.data.platformAudience} />}
        {config.data?.docsUrl && (
          <Link href={config.data.docsUrl} target="_blank" rel="noopener noreferrer" sx={{ display: 'inline-flex', gap: 1, alignItems: 'center', mt: 2 }}>
            {t('gettingStarted.docs')}
            <Icon icon={faArrowUpRightFromSquare} />
            <Box component="span" sx={visuallyHidden}>
              {t('auth.opensInNewTab')}
            </Box>
          </Link>
        )}
      </Box>
    </Paper>
  );
}
