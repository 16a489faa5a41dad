import { passkeySchema, type PasskeyResponse } from '@latchkey/contract';
import { Alert, Button, List, ListItem, ListItemText, Typography } from '@mui/material';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { showSaved } from '../../components/ui/saved-notice';
import { formatDateTime } from '../../lib/dates';
import { errorMessage, request } from '../../lib/http';

const passkeysKey = ['account', 'passkeys'] as const;

export async function listPasskeys() {
  const res = await request('/account/passkeys');
  return z.array(passkeySchema).parse(await res.json());
}

/** The browser's WebAuthn ceremony for a new passkey; the library loads only now. */
export async function addPasskey(name: string | undefined) {
  const { startRegistration } = await import('@simplewebauthn/browser');
  const options = await (await request('/account/passkeys/options', { method: 'POST' })).json();
  const response = await startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] });
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
  const refresh = () => queryClient.invalidateQueries({ queryKey: passkeysKey });
  const add = useMutation({
    mutationFn: () => addPasskey(undefined),
    onSuccess: () => showSaved(t('account.passkeyAdded')),
    onError: (e) => setError(e instanceof Error && e.name === 'NotAllowedError' ? null : errorMessage(e)),
    onSettled: refresh,
  });
  const remove = useMutation({ mutationFn: removePasskey, onError: (e) => setError(errorMessage(e)), onSettled: refresh });
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
      <Button sx={{ mt: 2 }} variant="outlined" disabled={add.isPending} onClick={() => { setError(null); add.mutate(); }}>
        {t('account.addPasskey')}
      </Button>
    </Section>
  );
}
