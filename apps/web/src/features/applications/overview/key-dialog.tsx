import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

interface Props {
  open: boolean;
  title: string;
  initialText: string;
  onCancel: () => void;
  onSave: (text: string) => void;
}

/** Add or edit an auth key as JSON (10 rows). Parsing happens on Save, so a bad paste gets the 'Failed' dialog. */
export function KeyDialog({ open, title, initialText, onCancel, onSave }: Props) {
  const { t } = useTranslation();
  const [text, setText] = useState(initialText);
  useEffect(() => {
    if (open) setText(initialText);
  }, [open, initialText]);

  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby="key-dialog-title" maxWidth="sm">
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          e.stopPropagation();
          onSave(text);
        }}
      >
        <DialogTitle id="key-dialog-title">{title}</DialogTitle>
        <DialogContent>
          <TextField
            label={t('authCard.keyInput')}
            helperText={t('authCard.keyInputHelp')}
            value={text}
            onChange={(e) => setText(e.target.value)}
            multiline
            rows={10}
            autoFocus
            slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace', fontSize: 13 } } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onCancel}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={text.trim() === ''}>
            {t('common.save')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
