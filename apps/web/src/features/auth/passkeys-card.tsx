import { passkeyOptionsSchema, passkeySchema, type PasskeyResponse } from '@latchkey/contract';
import { Alert, Button, List, ListItem, ListItemText, Typography } from '@mui/material';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EmailedCodeDialog } from '../../components/ui/emailed-code-dialog';
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
  return (
    <EmailedCodeDialog
      title={t('account.passkeyCodeTitle')}
      intro={t('account.passkeyCodeIntro', { email: getSession().email ?? '' })}
      submitLabel={t('account.passkeyCodeSubmit')}
      onSubmit={async (code) => onOptions(await passkeyOptions(code))}
      onResend={async () => {
        // Asked without a code, the service emails a new one (and the old one stops working): a 423.
        try {
          onOptions(await passkeyOptions());
        } catch (e) {
          if (!needsCode(e)) throw e;
        }
      }}
      onCancel={onClose}
    />
  );
}
