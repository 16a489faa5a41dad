import type { LockLogEntry } from '@latchkey/contract';
import { Box, Chip, Typography } from '@mui/material';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';

/**
 * How it was done, in words: "by phone key", "at the door's local network", "with access code “Cleaner”",
 * "from a tile", "from the portal". A code is named by its name when the lock's codes know it (or the entry
 * names it), else simply "with an access code".
 */
export function describeMethod(entry: LockLogEntry, t: TFunction, codeName: (id: string) => string | undefined): string | null {
  const { method, accessCodeId } = entry;
  if (!method) return null;
  if (method === 'access_code') {
    const name = (accessCodeId ? codeName(accessCodeId) : undefined) ?? (entry.type === 'UNLOCK' ? entry.subject : null);
    return name ? t('activityDetails.how.access_code', { name }) : t('activityDetails.how.accessCodeUnnamed');
  }
  return t(`activityDetails.how.${method}`);
}

/** Under the event: who reported it (the door itself, or the platform) and whether the door decided offline. */
export function EntryOrigin({ entry }: { entry: LockLogEntry }) {
  const { t } = useTranslation();
  const { source, offline } = entry;
  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5, alignItems: 'center', mt: 0.25 }}>
      <Typography component="span" variant="caption" color="text.secondary">
        {t(`activityDetails.reportedBy.${source}`)}
      </Typography>
      {offline && <Chip size="small" variant="outlined" label={t('activityDetails.decidedOffline')} />}
    </Box>
  );
}

/** The types a door reports about itself, which were not accepted or refused: they show their value, if any. */
export const DOOR_REPORTS: readonly LockLogEntry['type'][] = ['DOOR_OPENED', 'DOOR_CLOSED', 'BATTERY', 'JAMMED', 'TAMPERED', 'KEYPAD_LOCKED_OUT'];

/** The result column of a door's own report: a battery level; an alarm; nothing for the door's sensor. */
export function DoorReport({ entry }: { entry: LockLogEntry }) {
  const { t, i18n } = useTranslation();
  const { value } = entry;
  if (entry.type === 'BATTERY' && value !== null)
    return (
      <Typography variant="body2" sx={{ fontVariantNumeric: 'tabular-nums' }}>
        {t('doorState.battery', { value: new Intl.NumberFormat(i18n.language).format(value) })}
      </Typography>
    );
  if (entry.type === 'JAMMED' || entry.type === 'TAMPERED' || entry.type === 'KEYPAD_LOCKED_OUT')
    return <Chip size="small" color="error" variant="outlined" label={t('activityDetails.alarm')} />;
  return null;
}
