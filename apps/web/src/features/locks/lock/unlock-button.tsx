import { faLockOpen } from '@fortawesome/free-solid-svg-icons';
import type { Lock } from '@latchkey/contract';
import { Box, Button, Typography } from '@mui/material';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { MessageDialog } from '../../../components/ui/message-dialog';
import { errorMessage } from '../../../lib/http';
import { useKeyCodeDialog } from '../key-code-dialog';
import { KeyCodeCancelled, LocationUnavailableError, useUnlock, type UnlockDeps } from '../unlock-api';

/**
 * A real signed unlock from this browser; a refusal shows the lock's reason (it is in the log too).
 * `onSettled`: accepted or refused, for a page that shows the lock from a query of its own (the tile page);
 * `help`: the line under the button for that page's readers (the portal's own speaks to developers).
 */
export function UnlockButton({ lock, deps, onSettled, help }: { lock: Lock; deps?: UnlockDeps; onSettled?: () => void; help?: string }) {
  const { t } = useTranslation();
  // A password account's new key asks for the emailed code in this dialog.
  const { askCode, dialog } = useKeyCodeDialog();
  const unlock = useUnlock({ askCode, ...deps });
  const helpId = useId();
  const failure =
    unlock.error instanceof LocationUnavailableError
      ? t('locks.locationUnavailable')
      : unlock.error && !(unlock.error instanceof KeyCodeCancelled)
        ? t('locks.unlockRefused', { message: errorMessage(unlock.error) })
        : null;
  return (
    <Box sx={{ maxWidth: 360 }}>
      <Button
        variant="contained"
        size="large"
        startIcon={<Icon icon={faLockOpen} />}
        disabled={unlock.isPending}
        onClick={() => unlock.mutate(lock, { onSettled })}
        aria-describedby={helpId}
      >
        {unlock.isPending ? t('locks.unlocking') : t('locks.unlock')}
      </Button>
      <Typography id={helpId} variant="body2" color="text.secondary" sx={{ mt: 1 }}>
        {help ?? t('locks.unlockHelp')}
      </Typography>
      <MessageDialog
        open={failure !== null}
        tone="error"
        title={t('common.failedTitle')}
        message={failure ?? undefined}
        buttonLabel={t('common.done')}
        onClose={() => unlock.reset()}
      />
      {dialog}
    </Box>
  );
}
