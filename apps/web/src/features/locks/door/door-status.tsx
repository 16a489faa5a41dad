import { faBatteryFull, faPlugCircleXmark, faBatteryQuarter, faDoorClosed, faDoorOpen, faTriangleExclamation } from '@fortawesome/free-solid-svg-icons';
import { LOW_BATTERY_LEVEL, type Lock } from '@latchkey/contract';
import { Box, Chip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';

/** The alarms shown as chips, in words; a low battery shows on the battery's own chip, an unknown alarm as it came. */
const KNOWN_ALARMS = ['jammed', 'tampered'] as const;

/**
 * Whether the lock is reachable, and what its door last reported: open, closed or not known; its battery
 * (low below 20 %); and any alarm (jammed, tampered). It follows the lock, which the live events keep current.
 */
export function DoorStatus({ lock }: { lock: Lock }) {
  const { t, i18n } = useTranslation();
  const { door = null, battery = null, alarms = [] } = lock;
  const low = battery !== null && battery < LOW_BATTERY_LEVEL;
  const alarmName = (alarm: string) =>
    (KNOWN_ALARMS as readonly string[]).includes(alarm) ? t(`doorState.alarms.${alarm as (typeof KNOWN_ALARMS)[number]}`) : alarm;
  const percent = battery === null ? '' : new Intl.NumberFormat(i18n.language).format(battery);
  return (
    <Box role="group" aria-label={t('doorState.label')} sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
      {!lock.state.connected && (
        <Chip size="small" variant="outlined" color="error" icon={<Icon icon={faPlugCircleXmark} />} label={t('doorState.offline')} sx={{ px: 0.5 }} />
      )}
      <Chip
        size="small"
        variant="outlined"
        icon={<Icon icon={door === 'open' ? faDoorOpen : faDoorClosed} />}
        label={t(`doorState.door.${door ?? 'unknown'}`)}
        sx={{ px: 0.5 }}
      />
      {battery !== null && (
        <Chip
          size="small"
          variant="outlined"
          color={low ? 'error' : 'default'}
          icon={<Icon icon={low ? faBatteryQuarter : faBatteryFull} />}
          label={low ? t('doorState.batteryLow', { value: percent }) : t('doorState.battery', { value: percent })}
          sx={{ px: 0.5, fontVariantNumeric: 'tabular-nums' }}
        />
      )}
      {alarms.filter((alarm) => alarm !== 'low_battery').map((alarm) => (
        <Chip
          key={alarm}
          size="small"
          color="error"
          icon={<Icon icon={faTriangleExclamation} />}
          label={alarmName(alarm)}
          sx={{ px: 0.5 }}
        />
      ))}
    </Box>
  );
}
