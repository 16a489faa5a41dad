import { faArrowLeft } from '@fortawesome/free-solid-svg-icons';
import { Box, Link, Paper, Typography } from '@mui/material';
import { useDeferredValue } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useParams, useSearchParams } from 'react-router';
import { paths } from '../../../lib/paths';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { ApiError } from '../../../lib/http';
import { useLock } from '../api';
import { useLockEvents } from '../live-events';
import { useLockLog } from '../log-api';
import { useShares } from '../shares-api';
import { LiveStatusBadge } from '../live-status';
import { LockStateChip } from '../lock-state';
import { ActivityCard, rangeFromDays } from './activity-card';
import { SettingsCard } from './settings-card';
import { SharesCard } from './shares-card';
import { UnlockButton } from './unlock-button';
import { TilesCard } from '../tiles/tiles-card';
import { DeviceCard } from '../device/device-card';
import { AccessCodesCard } from '../access-codes/access-codes-card';
import { DoorStatus } from '../door/door-status';
import { SimulateMenu } from '../simulate/simulate-menu';
import { RetryAlert } from '../../../components/ui/retry-alert';

/**
 * Follows the live events and shows whether they arrive. Its own component: the status changing
 * (connecting → live) redraws this badge, not the whole page with its forms and tables.
 */
function LiveBadge({ appId }: { appId: string }) {
  return <LiveStatusBadge status={useLockEvents(appId)} />;
}

/**
 * One lock: its live state, its door's state and Unlock (and, on a virtual lock, Simulate), the device it
 * runs on, who it is shared with, its access codes, its settings, and its live activity.
 */
export function LockPage() {
  const { t } = useTranslation();
  const { appId = '', lockId = '' } = useParams();
  const lock = useLock(appId, lockId);
  // The cards under the lock's header mount in one deferred render, which React time-slices, once their
  // shares and activity are in (the shell started loading them with the application): a query answering
  // in the middle of that render would redo it synchronously, one long task on a slow phone.
  const [params] = useSearchParams();
  const sharesPending = useShares(appId, lockId).isPending;
  const logPending = useLockLog(appId, lockId, rangeFromDays(params.get('from'), params.get('to'))).isPending;
  const cardsReady = useDeferredValue(!sharesPending && !logPending, false);
  const back = (
    <Link
      component={RouterLink}
      to={paths.appLocks(appId)}
      sx={{ display: 'inline-flex', alignItems: 'center', gap: 1, mb: 2 }}
    >
      <Icon icon={faArrowLeft} />
      {t('locks.backToLocks')}
    </Link>
  );

  if (lock.isPending) return <PageLoader />;
  if (lock.isError) {
    const gone = lock.error instanceof ApiError && lock.error.status === 404;
    return (
      <>
        {back}
        <RetryAlert
          error={lock.error}
          text={gone ? () => t('locks.notFound') : undefined}
          onRetry={gone ? undefined : () => void lock.refetch()}
        />
      </>
    );
  }

  return (
    // minmax(0, 1fr): a wide table scrolls inside its card instead of widening the page on a phone.
    <Box sx={{ display: 'grid', gridTemplateColumns: 'minmax(0, 1fr)', gap: { xs: 2, md: 3 } }}>
      <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
        {back}
        <Box
          sx={{
            display: 'flex',
            flexWrap: 'wrap',
            gap: 3,
            justifyContent: 'space-between',
            alignItems: 'flex-start',
          }}
        >
          <Box sx={{ minWidth: 0 }}>
            <Typography variant="h1" sx={{ overflowWrap: 'anywhere', mb: 1 }}>
              {lock.data.name}
            </Typography>
            <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, alignItems: 'center' }}>
              <LockStateChip state={lock.data.state} />
              <LiveBadge appId={appId} />
            </Box>
            <Box sx={{ mt: 1 }}>
              <DoorStatus lock={lock.data} />
            </Box>
          </Box>
          <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'flex-start' }}>
            {/* A virtual lock (no device) can be made to report what a door would. */}
            {lock.data.device === null && <SimulateMenu appId={appId} lockId={lockId} />}
            <UnlockButton lock={lock.data} />
          </Box>
        </Box>
      </Paper>
      {cardsReady && <DeviceCard appId={appId} lock={lock.data} />}
      {cardsReady && <SharesCard appId={appId} lockId={lockId} />}
      {cardsReady && <AccessCodesCard appId={appId} lockId={lockId} />}
      {cardsReady && <TilesCard appId={appId} lockId={lockId} />}
      {cardsReady && (
        <Box
          sx={{
            display: 'grid',
            gap: { xs: 2, md: 3 },
            // minmax(0, …): a plain 1fr grows to its widest content, and a table made the page wider than a phone.
            gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'minmax(0, 2fr) minmax(0, 3fr)' },
            alignItems: 'start',
          }}
        >
          <SettingsCard appId={appId} lock={lock.data} />
          <ActivityCard appId={appId} lockId={lockId} />
        </Box>
      )}
    </Box>
  );
}
