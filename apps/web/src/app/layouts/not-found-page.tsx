import { Box, Button, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { paths } from '../../lib/paths';

export function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <Box component="main" sx={{ p: { xs: 2, sm: 6 }, textAlign: 'center' }}>
      <Typography variant="h1" sx={{ mb: 1 }}>
        {t('nav.notFoundTitle')}
      </Typography>
      <Typography sx={{ mb: 3 }}>{t('nav.notFoundText')}</Typography>
      <Button variant="contained" component={RouterLink} to={paths.start}>
        {t('nav.backToStart')}
      </Button>
    </Box>
  );
}
