import { Alert, Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, TextField } from '@mui/material';
import { useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/http';
import { EmailedCodeHint } from './emailed-code-hint';

interface Props {
  title: string;
  /** Says where the code went (the account's address). */
  intro: string;
  submitLabel: string;
  /** This application's Outbox, for a service without SMTP; without it the hint names any of the account's. */
  outboxHref?: string;
  /** Checks the code: resolves once accepted (the caller then closes the dialog), rejects with the refusal. */
  onSubmit: (code: string) => Promise<void>;
  /** Emails a new code: resolves once sent, rejects with why not. */
  onResend: () => Promise<void>;
  onCancel: () => void;
}

/**
 * Asks for the six-digit code emailed to the account. The field takes digits only and the submit stays
 * disabled until there are six; a refusal is shown with the field emptied and focused for another try,
 * and "Send a new code" says when one is on its way.
 */
export function EmailedCodeDialog({ title, intro, submitLabel, outboxHref, onSubmit, onResend, onCancel }: Props) {
  const { t } = useTranslation();
  const titleId = useId();
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const valid = /^\d{6}$/.test(code);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!valid || busy) return;
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await onSubmit(code);
    } catch (e) {
      setError(errorMessage(e));
      setCode('');
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };
  const resend = async () => {
    setError(null);
    setNotice(null);
    try {
      await onResend();
      setNotice(t('account.codeResent'));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <Dialog open onClose={onCancel} aria-labelledby={titleId} maxWidth="xs" fullWidth>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <DialogTitle id={titleId}>{title}</DialogTitle>
        <DialogContent>
          <DialogContentText>{intro}</DialogContentText>
          <EmailedCodeHint outboxHref={outboxHref} />
          <TextField
            inputRef={input}
            autoFocus
            fullWidth
            margin="normal"
            label={t('account.codeLabel')}
            value={code}
            onChange={(e) => setCode(e.target.value.replace(/\D/g, '').slice(0, 6))}
            slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'one-time-code', pattern: '[0-9]*', maxLength: 6 } }}
          />
          {error ? <Alert severity="error">{error}</Alert> : null}
          {notice ? (
            <Alert severity="info" role="status">
              {notice}
            </Alert>
          ) : null}
        </DialogContent>
        <DialogActions sx={{ flexWrap: 'wrap', gap: 1 }}>
          <Button onClick={() => void resend()}>{t('account.codeResend')}</Button>
          <Button onClick={onCancel}>{t('account.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={!valid || busy}>
            {submitLabel}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
