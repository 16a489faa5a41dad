import { faPlus } from '@fortawesome/free-solid-svg-icons';
import { Alert, Box, Card, CardActionArea, Container, Drawer, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, Link as RouterLink, useMatch, useNavigate } from 'react-router';
import { paths } from '../../../lib/paths';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { errorMessage } from '../../../lib/http';
import { useApplications } from '../api';
import { ApplicationTile, tileSx } from './application-tile';

const gridSx = {
  display: 'grid',
  gap: 2,
  gridTemplateColumns: { xs: 'repeat(auto-fill, minmax(140px, 1fr))', sm: 'repeat(auto-fill, minmax(200px, 1fr))' },
} as const;

/** The start screen; /start/new opens the add-application wizard in a side panel over it. */
export function StartPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const wizardOpen = useMatch(paths.addApplication) !== null;
  // Landing on /start/new, the panel is open from the first paint: its backdrop then skips the fade-in,
  // whose start forces a layout of the whole page while it loads (docs/performance.md).
  const [openOnArrival] = useState(wizardOpen);
  const apps = useApplications();

  return (
    <Container component="main" maxWidth="lg" sx={{ py: { xs: 3, md: 5 }, px: { xs: 1, sm: 2, md: 3 } }}>
      <Typography variant="h1" sx={{ mb: 1 }}>
        {t('start.welcome')}
      </Typography>
      <Typography color="text.secondary" sx={{ mb: 4 }}>
        {t('start.welcomeText')}
      </Typography>
      <Typography variant="h2" sx={{ mb: 2 }}>
        {t('start.myApplications')}
      </Typography>
      {apps.isPending && <PageLoader />}
      {apps.isError && <Alert severity="error">{errorMessage(apps.error)}</Alert>}
      {apps.data?.length === 0 && (
        <Box sx={{ mb: 2 }}>
          <Typography sx={{ fontWeight: 600 }}>{t('start.empty')}</Typography>
          <Typography color="text.secondary">{t('start.emptyExplainer')}</Typography>
        </Box>
      )}
      {apps.data && (
        <Box component="ul" sx={{ ...gridSx, listStyle: 'none', p: 0, m: 0 }}>
          {apps.data.map((app) => (
            <li key={app.applicationId}>
              <ApplicationTile app={app} />
            </li>
          ))}
          <li>
            <Card sx={{ height: '100%', borderStyle: 'dashed' }}>
              <CardActionArea component={RouterLink} to={paths.addApplication} sx={tileSx}>
                <Icon icon={faPlus} size="2x" />
                <Typography component="span" sx={{ fontWeight: 600, mt: 2 }}>
                  {t('start.addApplication')}
                </Typography>
              </CardActionArea>
            </Card>
          </li>
        </Box>
      )}
      <Drawer
        anchor="right"
        open={wizardOpen}
        onClose={() => void navigate(paths.start)}
        slotProps={{
          paper: { 'aria-labelledby': 'wizard-title', sx: { width: { xs: '100%', md: 720, lg: 960, xl: 1200 } } },
          backdrop: { appear: !openOnArrival },
        }}
      >
        {wizardOpen && <Outlet />}
      </Drawer>
    </Container>
  );
}
