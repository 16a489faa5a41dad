import { Alert, Box, Container, Paper, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { PageLoader } from '../../../components/ui/page-loader';
import { ApiError, errorMessage } from '../../../lib/http';
import { LockStateChip } from '../lock-state';
import { UnlockButton } from '../lock/unlock-button';
import { useTileLocks } from './api';

/**
 * /t/{tileId}: what a phone opens from a tile's QR code. The signed-in user sees the doors behind the tile
 * that they may open and unlocks one from the browser, with the lock page's own Unlock (its signed
 * operation and whatever checks it asks for). A tile with nothing for them says so.
 */
export function TilePage() {
  const { t } = useTranslation();
  const { tileId = '' } = useParams();
  const locks = useTileLocks(tileId);

  if (locks.isPending) return <PageLoader />;
  return (
    <Container component="main" maxWidth="sm" sx={{ py: { xs: 2, sm: 4 } }}>
      <Typography variant="h1" sx={{ mb: 2 }}>
        {t('tiles.pageTitle')}
      </Typography>
      {locks.isError && (
        <Alert severity={locks.error instanceof ApiError && locks.error.status === 404 ? 'info' : 'error'}>
          {locks.error instanceof ApiError && locks.error.status === 404
            ? t('tiles.nothingHere')
            : errorMessage(locks.error)}
        </Alert>
      )}
      <Box sx={{ display: 'grid', gap: 2 }}>
        {locks.data?.map((lock) => (
          <Paper
            key={lock.id}
            variant="outlined"
            component="section"
            aria-labelledby={`door-${lock.id}`}
            sx={{ p: { xs: 2, sm: 3 } }}
          >
            <Typography variant="h2" id={`door-${lock.id}`} sx={{ overflowWrap: 'anywhere', mb: 1 }}>
              {lock.name}
            </Typography>
            <Box sx={{ mb: 2 }}>
              <LockStateChip state={lock.state} />
            </Box>
            <UnlockButton lock={lock} onSettled={() => void locks.refetch()} />
          </Paper>
        ))}
      </Box>
    </Container>
  );
}
