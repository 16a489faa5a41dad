import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';

/** A battery level from 0 to 100 (whole percent). */
export function batteryLevel(text: string): number | null {
  if (!/^\d{1,3}$/.test(text.trim())) return null;
  const value = Number(text.trim());
  return value <= 100 ? value : null;
}

/** Asks for the battery level the virtual lock reports. */
export function BatteryDialog({ onReport, onClose }: { onReport: (value: number) => void; onClose: () => void }) {
  const { t } = useTranslation();
  const titleId = useId();
  const [text, setText] = useState('15');
  const [touched, setTouched] = useState(false);
  const value = batteryLevel(text);
  const invalid = touched && value === null;
  return (
    <Dialog open onClose={onClose} aria-labelledby={titleId} fullWidth maxWidth="xs">
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          e.stopPropagation();
          setTouched(true);
          if (value !== null) onReport(value);
        }}
      >
        <DialogTitle id={titleId}>{t('simulate.batteryTitle')}</DialogTitle>
        <DialogContent>
          <TextField
            fullWidth
            autoFocus
            sx={{ mt: 1 }}
            type="number"
            label={t('simulate.batteryLevel')}
            value={text}
            onChange={(e) => (setText(e.target.value), setTouched(true))}
            error={invalid}
            helperText={invalid ? t('simulate.batteryRange') : t('simulate.batteryHelp')}
            slotProps={{ htmlInput: { min: 0, max: 100, step: 1 } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained">
            {t('simulate.report')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
