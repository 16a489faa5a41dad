import { Box, Button, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useRouteError } from 'react-router';
import { paths } from '../../lib/paths';

/** Shown when a route's code fails to load or a render throws, instead of a blank page. */
export function RouteError() {
  const { t } = useTranslation();
  const error = useRouteError();
  console.error(error);
  return (
    <Box component="main" sx={{ p: 4, textAlign: 'center' }}>
      <Typography variant="h1" sx={{ mb: 2 }}>
        {t('common.loadFailed')}
      </Typography>
      <Button variant="contained" component={RouterLink} to={paths.start}>
        {t('nav.backToStart')}
      </Button>
    </Box>
  );
}
