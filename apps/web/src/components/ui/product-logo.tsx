import { faKey } from '@fortawesome/free-solid-svg-icons/faKey';
import { Box, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';

/** The product mark: an icon plus the word, sized for the toolbar (light) or the splash card (dark). */
export function ProductLogo({ tone = 'dark' }: { tone?: 'dark' | 'light' }) {
  const { t } = useTranslation();
  const colour = tone === 'light' ? '#FFFFFF' : 'primary.main';
  return (
    <Box sx={{ display: 'inline-flex', alignItems: 'center', gap: 1, color: colour }}>
      {/* Drawn from the icon's path data: FontAwesomeIcon would pull the SVG core into the /login chunk. */}
      <Box component="svg" viewBox={`0 0 ${faKey.icon[0]} ${faKey.icon[1]}`} aria-hidden sx={{ width: '1em', height: '1em', fill: 'currentColor' }}>
        <path d={String(faKey.icon[4])} />
      </Box>
      <Typography component="span" sx={{ fontWeight: 700, fontSize: '1.25rem', letterSpacing: 0.5, color: colour }}>
        {t('common.productName')}
      </Typography>
    </Box>
  );
}
