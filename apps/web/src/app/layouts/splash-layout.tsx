import { Box, Paper, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Outlet } from 'react-router';
import { ProductLogo } from '../../components/ui/product-logo';
import { LanguageButtons } from './language-buttons';

/** /splash: the product logo, the title and the nested login/register view. */
export function SplashLayout() {
  const { t } = useTranslation();
  return (
    <Box
      component="main"
      sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', p: { xs: 2, sm: 4 } }}
    >
      <Paper variant="outlined" sx={{ width: '100%', maxWidth: 440, p: { xs: 3, sm: 4 } }}>
        <Box sx={{ textAlign: 'center', mb: 2 }}>
          <ProductLogo />
          <Typography variant="h1" sx={{ mt: 1, fontSize: '1.5rem' }}>
            {t('common.portalTitle')}
          </Typography>
        </Box>
        <Outlet />
        <LanguageButtons />
      </Paper>
    </Box>
  );
}
