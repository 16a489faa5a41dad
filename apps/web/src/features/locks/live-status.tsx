import { Box, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import type { LiveStatus } from './live-events';

/** Whether the page is following the lock events; announced politely when it changes. */
export function LiveStatusBadge({ status }: { status: LiveStatus }) {
  const { t } = useTranslation();
  return (
    <Typography
      variant="body2"
      color="text.secondary"
      role="status"
      sx={{ display: 'inline-flex', alignItems: 'center', gap: 1 }}
    >
      <Box
        component="span"
        aria-hidden="true"
        sx={{
          width: 8,
          height: 8,
          borderRadius: '50%',
          bgcolor: status === 'live' ? 'success.main' : 'warning.main',
        }}
      />
      {t(`locks.live.${status}`)}
    </Typography>
  );
}
