import { faCloud, faMicrochip } from '@fortawesome/free-solid-svg-icons';
import type { LockDeviceSummary } from '@latchkey/contract';
import { Chip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';

export type DeviceKind = 'virtual' | 'waiting' | 'online' | 'offline';

/** What a lock runs on: the platform (a sandbox lock), or a device that is online, offline or not set up. */
export function deviceKind(device: Pick<LockDeviceSummary, 'provisioned' | 'connected'> | null): DeviceKind {
  if (!device) return 'virtual';
  if (!device.provisioned) return 'waiting';
  return device.connected ? 'online' : 'offline';
}

/**
 * A small chip: Virtual, or the device's Online / Offline / Not set up. Its name says it whole ("Device
 * online"), since the short text alone reads ambiguously in a list. Nothing while the lock does not say.
 */
export function DeviceChip({ device }: { device: LockDeviceSummary | null | undefined }) {
  const { t } = useTranslation();
  if (device === undefined) return null;
  const kind = deviceKind(device);
  return (
    <Chip
      size="small"
      variant="outlined"
      role="img"
      aria-label={t(`device.chipLabel.${kind}`)}
      color={kind === 'online' ? 'success' : 'default'}
      icon={<Icon icon={kind === 'virtual' ? faCloud : faMicrochip} />}
      label={t(`device.chip.${kind}`)}
      sx={{ px: 0.5 }}
    />
  );
}
