import { passkeyOptionsSchema, passkeySchema, type PasskeyResponse } from '@latchkey/contract';
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, List, ListItem, ListItemText, TextField, Typography } from '@mui/material';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EmailedCodeHint } from '../../components/ui/emailed-code-hint';
import { showSaved } from '../../components/ui/saved-notice';
import { formatDateTime } from '../../lib/dates';
import { ApiError, errorMessage, request } from '../../lib/http';
import { getSession } from '../../lib/session';

const passkeysKey = ['account', 'passkeys'] as const;
type PasskeyOptions = z.infer<typeof passkeyOptionsSchema>;

export async function listPasskeys() {
  const res = await request('/account/passkeys');
  return z.array(passkeySchema).parse(await res.json());
}

/**
 * The options to add a passkey. A session that signed in with a passkey gets them at once; a password
 * session needs the six-digit code emailed to the account: asked without one, the service emails it and
 * answers 423 (`needsCode`).
 */
export async function passkeyOptions(code?: string): Promise<PasskeyOptions> {
  const res = await request('/account/passkeys/options', { method: 'POST', ...(code ? { body: { code } } : {}) });
  return passkeyOptionsSchema.parse(await res.json());
}
export const needsCode = (e: unknown) => e instanceof ApiError && e.status === 423;

/** The browser's WebAuthn ceremony for a new passkey with those options; the library loads only now. */
export async function addPasskey(options: PasskeyOptions, name?: string) {
  const { startRegistration } = await import('@simplewebauthn/browser');
  const response = await startRegistration({ optionsJSON: options as unknown as Parameters<typeof startRegistration>[0]['optionsJSON'] });
  const res = await request('/account/passkeys', { method: 'POST', body: { response: response as unknown as PasskeyResponse, ...(name ? { name } : {}) } });
  return passkeySchema.parse(await res.json());
}

export async function removePasskey(id: string) {
  await request(`/account/passkeys/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** Passkeys of the account: sign in without a password; a passkey session needs no code for new keys. */
export function PasskeysCard({ Section }: { Section: (props: { title: string; children: React.ReactNode }) => React.ReactNode }) {
  const { t, i18n } = useTranslation();
  const queryClient = useQueryClient();
  const passkeys = useQuery({ queryKey: passkeysKey, queryFn: listPasskeys });
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const [askingCode, setAskingCode] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: passkeysKey });
  const add = useMutation({
    mutationFn: (options: PasskeyOptions) => addPasskey(options),
    onSuccess: () => showSaved(t('account.passkeyAdded')),
    // The person closed the browser's passkey prompt: nothing to report.
    onError: (e) => setError(e instanceof Error && e.name === 'NotAllowedError' ? null : errorMessage(e)),
    onSettled: refresh,
  });
  const remove = useMutation({ mutationFn: removePasskey, onError: (e) => setError(errorMessage(e)), onSettled: refresh });
  const start = async () => {
    setError(null);
    setStarting(true);
    try {
      add.mutate(await passkeyOptions());
    } catch (e) {
      // A password session: the code is on its way; the dialog asks for it.
      if (needsCode(e)) setAskingCode(true);
      else setError(errorMessage(e));
    } finally {
      setStarting(false);
    }
  };
  return (
    <Section title={t('account.passkeys')}>
      <Typography color="text.secondary" sx={{ mb: 1 }}>
        {t('account.passkeysHint')}
      </Typography>
      {passkeys.data?.length === 0 ? <Typography sx={{ mb: 1 }}>{t('account.noPasskeys')}</Typography> : null}
      <List disablePadding>
        {(passkeys.data ?? []).map((p) => (
          <ListItem
            key={p.id}
            divider
            disableGutters
            sx={{ pr: 14 }}
            secondaryAction={
              <Button size="small" color="error" disabled={remove.isPending} onClick={() => remove.mutate(p.id)} aria-label={t('account.removePasskeyOf', { name: p.name })}>
                {t('account.removePasskey')}
              </Button>
            }
          >
            <ListItemText
              primary={p.name}
              secondary={`${t('account.added', { when: formatDateTime(p.createdAt, i18n.language) })}${p.lastUsedAt ? ` · ${t('account.lastUsed', { when: formatDateTime(p.lastUsedAt, i18n.language) })}` : ''}`}
            />
          </ListItem>
        ))}
      </List>
      {error ? (
        <Alert severity="error" sx={{ mt: 1 }} onClose={() => setError(null)}>
          {error}
        </Alert>
      ) : null}
      <Button sx={{ mt: 2 }} variant="outlined" disabled={starting || add.isPending || askingCode} onClick={() => void start()}>
        {t('account.addPasskey')}
      </Button>
      {askingCode ? (
        <PasskeyCodeDialog
          onClose={() => setAskingCode(false)}
          onOptions={(options) => {
            setAskingCode(false);
            add.mutate(options);
          }}
        />
      ) : null}
    </Section>
  );
}

/** The second factor for a new passkey: the six-digit code emailed to the account; the right one gets the options. */
function PasskeyCodeDialog({ onClose, onOptions }: { onClose: () => void; onOptions: (options: PasskeyOptions) => void }) {
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
      onOptions(await passkeyOptions(code));
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
      // Asked without a code, the service emails a new one (and the old one stops working).
      onOptions(await passkeyOptions());
    } catch (e) {
      if (needsCode(e)) setNotice(t('account.codeResent'));
      else setError(errorMessage(e));
    }
  };

  return (
    <Dialog open onClose={onClose} aria-labelledby={titleId} maxWidth="xs" fullWidth>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <DialogTitle id={titleId}>{t('account.passkeyCodeTitle')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('account.passkeyCodeIntro', { email: getSession().email ?? '' })}</DialogContentText>
          <EmailedCodeHint />
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
          <Button onClick={onClose}>{t('account.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={!valid || busy}>
            {t('account.passkeyCodeSubmit')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
