import type { CertificateResponse } from '@latchkey/contract';
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, TextField } from '@mui/material';
import { useCallback, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { paths } from '../../lib/paths';
import { EmailedCodeHint } from '../../components/ui/emailed-code-hint';
import { errorMessage } from '../../lib/http';
import { getSession } from '../../lib/session';
import type { AskKeyCode } from './unlock-api';

type Actions = Parameters<AskKeyCode>[0];
interface Pending extends Actions {
  resolve: (certificate: CertificateResponse | null) => void;
}

/**
 * The second factor for this browser's new key: `askCode` opens the dialog and resolves with the
 * certificate once a code was accepted, or null on Cancel. Render `dialog` somewhere on the page.
 */
export function useKeyCodeDialog(): { askCode: AskKeyCode; dialog: React.ReactNode } {
  const [pending, setPending] = useState<Pending | null>(null);
  const askCode = useCallback<AskKeyCode>((actions) => new Promise((resolve) => setPending({ ...actions, resolve })), []);
  const close = (certificate: CertificateResponse | null) => {
    pending?.resolve(certificate);
    setPending(null);
  };
  return { askCode, dialog: pending ? <KeyCodeDialog pending={pending} onClose={close} /> : null };
}

function KeyCodeDialog({ pending, onClose }: { pending: Pending; onClose: (c: CertificateResponse | null) => void }) {
  const { t } = useTranslation();
  const { appId } = useParams();
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
    try {
      onClose(await pending.submit(code));
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
      await pending.resend();
      setNotice(t('account.codeResent'));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <Dialog open onClose={() => onClose(null)} aria-labelledby={titleId} maxWidth="xs" fullWidth>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <DialogTitle id={titleId}>{t('account.codeTitle')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('account.codeIntro', { email: getSession().email ?? '' })}</DialogContentText>
          <EmailedCodeHint outboxHref={appId ? paths.outbox(appId) : undefined} />
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
          <Button onClick={() => onClose(null)}>{t('account.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={!valid || busy}>
            {t('account.codeSubmit')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
