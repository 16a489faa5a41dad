import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { localText } from '../../../lib/server-text';

interface Props {
  open: boolean;
  title: string;
  initialText: string;
  onCancel: () => void;
  /** Resolves to the reason the key was refused (shown under the field), or to null once saved. */
  onSave: (text: string) => Promise<string | null>;
}

/**
 * Add or edit an auth key as JSON (10 rows). Parsing happens on Save; a bad paste or a refusal stays in
 * the dialog, under the field, with the text kept and focus on it so it can be corrected.
 */
export function KeyDialog({ open, title, initialText, onCancel, onSave }: Props) {
  const { t } = useTranslation();
  const [text, setText] = useState(initialText);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (open) {
      setText(initialText);
      setError(null);
    }
  }, [open, initialText]);

  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby="key-dialog-title" maxWidth="sm" fullWidth>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          e.stopPropagation();
          setSaving(true);
          const failure = await onSave(text);
          setSaving(false);
          setError(failure);
          if (failure) field.current?.focus();
        }}
      >
        <DialogTitle id="key-dialog-title">{title}</DialogTitle>
        <DialogContent>
          <TextField
            inputRef={field}
            label={t('authCard.keyInput')}
            helperText={error ? localText(error) : t('authCard.keyInputHelp')}
            error={error !== null}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setError(null);
            }}
            multiline
            rows={10}
            autoFocus
            slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace', fontSize: 13 } } }}
          />
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            {t('issuerKeys.expHint')}
          </Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={onCancel}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={text.trim() === '' || saving}>
            {t('common.save')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
