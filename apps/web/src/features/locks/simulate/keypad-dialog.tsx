import { Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../lib/http';
import { localText } from '../../../lib/server-text';
import { useSimulateKeypad } from './api';

/**
 * Types a code at the virtual lock's keypad and says what the door decided: opened, or refused and why.
 * The dialog stays open for another try; the unlock (or refusal) also reaches the activity live.
 */
export function KeypadDialog({ appId, lockId, onClose }: { appId: string; lockId: string; onClose: () => void }) {
  const { t } = useTranslation();
  const titleId = useId();
  const keypad = useSimulateKeypad(appId, lockId);
  const [code, setCode] = useState('');
  const [missing, setMissing] = useState(false);
  const result = keypad.data;

  return (
    <Dialog open onClose={onClose} aria-labelledby={titleId} fullWidth maxWidth="xs">
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          e.stopPropagation();
          if (!code.trim()) return setMissing(true);
          keypad.mutate(code.trim());
        }}
      >
        <DialogTitle id={titleId}>{t('simulate.keypadTitle')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
            {t('simulate.keypadText')}
          </Typography>
          <TextField
            fullWidth
            autoFocus
            label={t('simulate.code')}
            value={code}
            onChange={(e) => (setCode(e.target.value), setMissing(false), keypad.reset())}
            error={missing}
            helperText={missing ? t('common.required') : undefined}
            slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'off' } }}
          />
          {/* What the door decided, announced as it appears. */}
          <Box role="status" aria-live="polite" sx={{ mt: 2 }}>
            {result?.outcome === 'DONE' && <Alert severity="success">{t('simulate.keypadDone')}</Alert>}
            {result?.outcome === 'REFUSED' && (
              <Alert severity="error">
                {result.reason
                  ? t('simulate.keypadRefusedBecause', { reason: localText(result.reason) })
                  : t('simulate.keypadRefused')}
              </Alert>
            )}
          </Box>
          {keypad.isError && (
            <Alert severity="error" sx={{ mt: 2 }}>
              {errorMessage(keypad.error)}
            </Alert>
          )}
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.close')}</Button>
          <Button type="submit" variant="contained" disabled={keypad.isPending}>
            {t('simulate.typeCode')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
