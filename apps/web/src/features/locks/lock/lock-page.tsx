import { faArrowLeft } from '@fortawesome/free-solid-svg-icons';
import { Box, Link, Paper, Typography } from '@mui/material';
import { memo, startTransition, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Lock } from '@latchkey/contract';
import { Link as RouterLink, useParams, useSearchParams } from 'react-router';
import { paths } from '../../../lib/paths';
import { Icon } from '../../../components/ui/icon';
import { usePreloadWhenIdle } from '../../../components/ui/lazy-part';
import { PageLoader } from '../../../components/ui/page-loader';
import { ApiError } from '../../../lib/http';
import { useLock } from '../api';
import { useLockEvents } from '../live-events';
import { useLockLog } from '../log-api';
import { useShares } from '../shares-api';
import { LiveStatusBadge } from '../live-status';
import { LockStateChip } from '../lock-state';
import { ActivityCard as ActivityCardAlways, rangeFromDays } from './activity-card';
import { SettingsCard as SettingsCardAlways } from './settings-card';
import { SHARES_CARD_PARTS, SharesCard as SharesCardAlways } from './shares-card';
import { UnlockButton } from './unlock-button';
import { TILES_CARD_PARTS, TilesCard as TilesCardAlways } from '../tiles/tiles-card';
import { useLockTiles } from '../tiles/api';
import { DEVICE_CARD_PARTS, DeviceCard as DeviceCardAlways } from '../device/device-card';
import { ACCESS_CODES_CARD_PARTS, AccessCodesCard as AccessCodesCardAlways } from '../access-codes/access-codes-card';
import { useAccessCodes } from '../access-codes/api';
import { DoorStatus } from '../door/door-status';
import { SIMULATE_MENU_PARTS, SimulateMenu } from '../simulate/simulate-menu';
import { RetryAlert } from '../../../components/ui/retry-alert';

/**
 * Follows the live events and shows whether they arrive. Its own component: the status changing
 * (connecting → live) redraws this badge, not the whole page with its forms and tables.
 */
function LiveBadge({ appId }: { appId: string }) {
  return <LiveStatusBadge status={useLockEvents(appId)} />;
}

// A live event about the lock redraws the cards that show the lock (device, settings), not the others.
const DeviceCard = memo(DeviceCardAlways);
const SharesCard = memo(SharesCardAlways);
const AccessCodesCard = memo(AccessCodesCardAlways);
const TilesCard = memo(TilesCardAlways);
const SettingsCard = memo(SettingsCardAlways);
const ActivityCard = memo(ActivityCardAlways);

/** The cards under the lock's header, top to bottom: device, shares, access codes, tiles, settings, activity. */
const CARD_COUNT = 6;

/**
 * What a click on the page opens (Simulate's dialogs, the device's steps, the cards' dialogs), each in a chunk
 * of its own: fetched while the browser is idle once every card is drawn, so neither the page's first drawing
 * nor its cards wait for that code, and a click still opens them at once.
 */
const CLICK_PARTS = [
  ...SIMULATE_MENU_PARTS,
  ...DEVICE_CARD_PARTS,
  ...SHARES_CARD_PARTS,
  ...ACCESS_CODES_CARD_PARTS,
  ...TILES_CARD_PARTS,
];

/**
 * How many of the cards under the header are drawn. None until `ready` (their data are in); then one more
 * after each commit, in a task of its own and a transition: one render and commit of all of them was the
 * page's longest task on a slow phone, and the browser paints and takes input between two cards. A card is
 * added below those drawn, so nothing on screen moves. Once drawn a card stays (a new date filter reloads
 * the activity inside its card); another lock starts again.
 */
function useCardsShown(lockId: string, ready: boolean): number {
  const [shown, setShown] = useState({ lockId, count: 0 });
  const count = shown.lockId === lockId ? shown.count : 0;
  const started = count > 0 || ready;
  useEffect(() => {
    if (!started || count >= CARD_COUNT) return;
    const timer = setTimeout(() => startTransition(() => setShown({ lockId, count: count + 1 })));
    return () => clearTimeout(timer);
  }, [lockId, started, count]);
  return count;
}

/**
 * The cards under the lock's header. Their own component, so that drawing one more redraws neither the
 * header nor the page's queries, and a live event about the lock redraws only the cards that show it.
 */
const LockCards = memo(function LockCards({
  appId,
  lock,
  ready,
}: {
  appId: string;
  lock: Lock;
  ready: boolean;
}) {
  const shown = useCardsShown(lock.id, ready);
  usePreloadWhenIdle(CLICK_PARTS, shown === CARD_COUNT);
  return (
    <>
      {shown > 0 && <DeviceCard appId={appId} lock={lock} />}
      {shown > 1 && <SharesCard appId={appId} lockId={lock.id} />}
      {shown > 2 && <AccessCodesCard appId={appId} lockId={lock.id} />}
      {shown > 3 && <TilesCard appId={appId} lockId={lock.id} />}
      {shown > 4 && (
        <Box
          sx={{
            display: 'grid',
            gap: { xs: 2, md: 3 },
            // minmax(0, …): a plain 1fr grows to its widest content, and a table made the page wider than a phone.
            gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'minmax(0, 2fr) minmax(0, 3fr)' },
            alignItems: 'start',
          }}
        >
          <SettingsCard appId={appId} lock={lock} />
          {shown > 5 && <ActivityCard appId={appId} lockId={lock.id} />}
        </Box>
      )}
    </>
  );
});

/**
 * One lock: its live state, its door's state and Unlock (and, on a virtual lock, Simulate), the device it
 * runs on, who it is shared with, its access codes, its settings, and its live activity.
 */
export function LockPage() {
  const { t } = useTranslation();
  const { appId = '', lockId = '' } = useParams();
  const lock = useLock(appId, lockId);
  // The cards under the lock's header are drawn once what they show is in (the shell started loading the
  // shares and activity with the application; the codes and tiles start here, with the page): a query
  // answering while a card renders would redo that render synchronously, a long task on a slow phone.
  const [params] = useSearchParams();
  const sharesPending = useShares(appId, lockId).isPending;
  const logPending = useLockLog(appId, lockId, rangeFromDays(params.get('from'), params.get('to'))).isPending;
  const codesPending = useAccessCodes(appId, lockId).isPending;
  const tilesPending = useLockTiles(appId, lockId).isPending;
  const cardsReady = !sharesPending && !logPending && !codesPending && !tilesPending;
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
      <LockCards appId={appId} lock={lock.data} ready={cardsReady} />
    </Box>
  );
}
