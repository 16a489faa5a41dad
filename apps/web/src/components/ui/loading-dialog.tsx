import { LOADING_DIALOG_DELAY_MS } from '@latchkey/contract';
import { Box, CircularProgress, Dialog, DialogContent, Typography } from '@mui/material';
import { useId } from 'react';
import { useOpenedOnce } from './use-opened-once';
import { useTranslation } from 'react-i18next';
import { useDelayedFlag } from '../../lib/use-delayed-flag';

/** Appears only once a call has been running for 100 ms, so quick calls do not flash. */
export function LoadingDialog({ active }: { active: boolean }) {
  const { t } = useTranslation();
  const open = useDelayedFlag(active, LOADING_DIALOG_DELAY_MS);
  const titleId = useId();
  // Nothing until first shown: every operation's loading dialog costs a page nothing until a call is slow.
  if (!useOpenedOnce(open)) return null;
  return (
    <Dialog open={open} aria-labelledby={titleId} aria-busy="true" maxWidth="xs">
      <DialogContent>
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 2 }}>
          <CircularProgress size={28} aria-hidden />
          <Typography id={titleId}>{t('common.loading')}</Typography>
        </Box>
      </DialogContent>
    </Dialog>
  );
}
