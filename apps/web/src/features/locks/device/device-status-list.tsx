import type { DeviceStatus } from '@latchkey/contract';
import { Box, Chip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Value } from '../../../components/ui/guide-parts';
import { formatDateTimeSeconds } from '../../../lib/dates';
import { formatAgo } from './format';
import { useNow } from './use-now';

/** How often "last seen 2 minutes ago" is written again. */
const AGO_TICK_MS = 15_000;

/** A bound device as it last reported: online or offline, when it was last seen, its firmware and lock state. */
export function DeviceStatusList({ device }: { device: DeviceStatus }) {
  const { t, i18n } = useTranslation();
  const now = useNow(AGO_TICK_MS);
  const lockState =
    device.locked === null ? t('device.unknown') : device.locked ? t('locks.locked') : t('locks.unlocked');
  return (
    <Box
      component="dl"
      sx={{
        display: 'grid',
        gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'max-content minmax(0, 1fr)' },
        columnGap: 3,
        rowGap: 1,
        alignItems: 'center',
        mt: 2,
        mb: 0,
      }}
    >
      <Value term={t('device.connection')}>
        {/* Announced when it changes: the device coming online is what the reader waits for. */}
        <Box component="span" role="status">
          <Chip
            size="small"
            variant="outlined"
            color={device.connected ? 'success' : 'default'}
            label={device.connected ? t('device.online') : t('device.offline')}
          />
        </Box>
      </Value>
      <Value term={t('device.lastSeen')}>
        {device.lastSeen === null ? (
          t('device.never')
        ) : (
          <Box
            component="time"
            dateTime={new Date(device.lastSeen * 1000).toISOString()}
            title={formatDateTimeSeconds(device.lastSeen, i18n.language)}
          >
            {formatAgo(device.lastSeen, now, i18n.language)}
          </Box>
        )}
      </Value>
      <Value term={t('device.firmware')}>{device.firmware ?? t('device.unknown')}</Value>
      <Value term={t('device.lockState')}>{lockState}</Value>
      <Value term={t('device.deviceId')}>
        <code>{device.deviceId}</code>
      </Value>
    </Box>
  );
}
