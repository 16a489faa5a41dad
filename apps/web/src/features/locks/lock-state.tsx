import { faLock, faLockOpen } from '@fortawesome/free-solid-svg-icons';
import type { LockState } from '@latchkey/contract';
import { Chip } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/ui/icon';

/** Whole seconds until the lock locks again by itself; 0 when it is locked. */
export function secondsLeft(state: LockState, nowMs: number): number {
  if (state.locked || state.unlockedUntil === null) return 0;
  return Math.max(0, Math.ceil((state.unlockedUntil - nowMs) / 1000));
}

/** The clock, ticking while `running`: the countdown redraws each second and stops at zero by itself. */
function useNow(running: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [running]);
  return now;
}

/**
 * Locked, or unlocked with the seconds until it relocks. The server relocks by time alone (no event), so
 * the chip turns back to Locked when its own countdown reaches zero.
 */
export function LockStateChip({ state }: { state: LockState }) {
  const { t } = useTranslation();
  const unlockedUntil = state.locked ? null : state.unlockedUntil;
  const now = useNow(unlockedUntil !== null && unlockedUntil > Date.now());
  const left = secondsLeft(state, now);
  const open = !state.locked && (state.unlockedUntil === null || left > 0);
  return (
    <Chip
      size="small"
      variant={open ? 'filled' : 'outlined'}
      color={open ? 'success' : 'default'}
      icon={<Icon icon={open ? faLockOpen : faLock} />}
      label={
        open ? (left > 0 ? t('locks.relocksIn', { seconds: left }) : t('locks.unlocked')) : t('locks.locked')
      }
      sx={{ px: 0.5, fontVariantNumeric: 'tabular-nums' }}
    />
  );
}
