import { faPlus, faShieldHalved, faXmark } from '@fortawesome/free-solid-svg-icons';
import { keyExpiryState, parseJwkInput, type Application, type PublicJwk } from '@latchkey/contract';
import { Box, Button, Card, CardContent, Chip, IconButton, Typography } from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { TOKEN_TESTER_PARAM } from '../../../lib/paths';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { CopyValue } from '../../../components/ui/copy-value';
import { Icon } from '../../../components/ui/icon';
import { useOperation } from '../../../components/ui/use-operation';
import { usePortalConfig } from '../../../lib/config';
import { useAuthItemAction, type AuthItemAction, type DomainKind } from '../auth-items-api';
import { DomainDialog } from './domain-dialog';
import { DomainList } from './domain-list';
import { KeyExpiryMark, KeyExpiryWarnings } from './key-expiry';
import { GenerateKeyButton } from './generate-key-dialog';
import { KeyDialog } from './key-dialog';
import { TokenTesterDialog } from './token-tester-dialog';

type Removal = { type: 'remove-key'; kid: string } | { type: 'remove-domain'; kind: DomainKind; url: string };

/** Auth keys (kid chips), auth domains and CORS domains; every change reloads, every failure says why. */
export function AuthenticationCard({ app }: { app: Application }) {
  const { t } = useTranslation();
  const action = useAuthItemAction(app.applicationId);
  const op = useOperation();
  const [keyDialog, setKeyDialog] = useState<{ mode: 'add' } | { mode: 'edit'; key: PublicJwk } | null>(null);
  const [domainDialog, setDomainDialog] = useState<DomainKind | null>(null);
  const [removal, setRemoval] = useState<Removal | null>(null);
  const [testerOpen, setTesterOpen] = useTokenTesterOpen();

  const perform = (a: AuthItemAction, notice: true | string = true) => op.run(() => action.mutateAsync(a), { notice });

  /**
   * A dialog's save: the dialog closes once it worked, and a bad paste or a refusal stays in it, under
   * the field (the text kept), instead of a 'Failed' dialog over a closed form.
   */
  const inDialog = async (a: AuthItemAction, notice: true | string, close: () => void): Promise<string | null> => {
    const result = await op.run(() => action.mutateAsync(a), { notice, inPlace: () => true });
    if (!result.ok) return result.message;
    close();
    return null;
  };

  const onSaveKey = async (text: string): Promise<string | null> => {
    const parsed = parseJwkInput(text);
    if (!parsed.ok) return parsed.message;
    const close = () => setKeyDialog(null);
    if (keyDialog?.mode === 'edit') return inDialog({ type: 'replace-key', oldKey: keyDialog.key, key: parsed.key }, t('authCard.keyUpdated'), close);
    return inDialog({ type: 'add-key', key: parsed.key }, t('authCard.keyAdded'), close);
  };

  const confirmText =
    removal?.type === 'remove-key'
      ? t('authCard.removeKeyConfirm')
      : removal?.kind === 'cors'
        ? t('authCard.removeCorsDomainConfirm')
        : t('authCard.removeAuthDomainConfirm');
  const discovery = app.authDomainDiscovery ?? {};

  return (
    <Card component="section" aria-labelledby="card-authentication" sx={{ mb: 3 }}>
      <CardContent>
        <Box sx={{ display: 'flex', alignItems: 'center', flexWrap: 'wrap', gap: 1, mb: 1 }}>
          <Typography id="card-authentication" variant="h2" sx={{ flexGrow: 1 }}>
            {t('authCard.title')}
          </Typography>
          <Button variant="contained" onClick={() => setTesterOpen(true)} startIcon={<Icon icon={faShieldHalved} />}>
            {t('tokenTester.open')}
          </Button>
        </Box>
        <PlatformAudience />
        <AuthKeys
          app={app}
          onAdd={() => setKeyDialog({ mode: 'add' })}
          onEdit={(key) => setKeyDialog({ mode: 'edit', key })}
          onRemove={(kid) => setRemoval({ type: 'remove-key', kid })}
        />
        <DomainList
          id="auth-domains-title"
          title={t('authCard.authDomains')}
          description={t('authCard.authDomainsHelp')}
          empty={t('authCard.noAuthDomains')}
          addLabel={t('authCard.addAuthDomain')}
          urls={app.authDomains}
          secondary={(url) => {
            const found = discovery[url];
            return found ? `${t('issuerKeys.discoveryChip')} · ${t('issuerKeys.jwksFrom', { jwksUri: found.jwksUri })}` : null;
          }}
          removeLabel={(url) => t('authCard.removeAuthDomainLabel', { url })}
          onAdd={() => setDomainDialog('auth')}
          onRemove={(url) => setRemoval({ type: 'remove-domain', kind: 'auth', url })}
        />
        <DomainList
          id="cors-domains-title"
          title={t('authCard.corsDomains')}
          empty={t('authCard.noCorsDomains')}
          addLabel={t('authCard.addCorsDomain')}
          urls={app.corsDomains}
          removeLabel={(url) => t('authCard.removeCorsDomainLabel', { url })}
          onAdd={() => setDomainDialog('cors')}
          onRemove={(url) => setRemoval({ type: 'remove-domain', kind: 'cors', url })}
        />
      </CardContent>
      <KeyDialog
        open={keyDialog !== null}
        title={keyDialog?.mode === 'edit' ? t('authCard.editKey') : t('authCard.addKey')}
        initialText={keyDialog?.mode === 'edit' ? JSON.stringify(keyDialog.key, null, 2) : ''}
        onCancel={() => setKeyDialog(null)}
        onSave={onSaveKey}
      />
      <DomainDialog
        kind={domainDialog}
        onCancel={() => setDomainDialog(null)}
        onAdd={(url, withDiscovery) =>
          inDialog({ type: 'add-domain', kind: domainDialog ?? 'auth', url, discovery: withDiscovery }, true, () => setDomainDialog(null))
        }
      />
      <ConfirmDialog
        open={removal !== null}
        title={confirmText}
        message={removal?.type === 'remove-key' ? removal.kid : removal?.url}
        confirmLabel={t('common.remove')}
        cancelLabel={t('common.cancel')}
        onConfirm={() => {
          const r = removal;
          setRemoval(null);
          if (r) void perform(r, t('common.removed'));
        }}
        onCancel={() => setRemoval(null)}
      />
      <TokenTesterDialog applicationId={app.applicationId} open={testerOpen} onClose={() => setTesterOpen(false)} />
      {op.dialogs}
    </Card>
  );
}

/** The tester's open state lives in the URL, so Getting Started can link straight to it. */
function useTokenTesterOpen(): [boolean, (open: boolean) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const setOpen = (open: boolean) =>
    setSearchParams(
      (params) => {
        const next = new URLSearchParams(params);
        if (open) next.set(TOKEN_TESTER_PARAM, 'open');
        else next.delete(TOKEN_TESTER_PARAM);
        return next;
      },
      { replace: true },
    );
  return [searchParams.has(TOKEN_TESTER_PARAM), setOpen];
}

/** The audience every application's tokens name, to copy (once the portal's config has loaded). */
function PlatformAudience() {
  const { t } = useTranslation();
  const config = usePortalConfig();
  if (!config.data) return null;
  return (
    <Box component="section" aria-labelledby="platform-audience-title" sx={{ mb: 2 }}>
      <Typography id="platform-audience-title" variant="h3">
        {t('platformAudience.title')}
      </Typography>
      <Typography color="text.secondary" sx={{ mt: 0.5 }}>
        {t('platformAudience.text')}
      </Typography>
      <CopyValue value={config.data.platformAudience} name={t('platformAudience.title')} />
    </Box>
  );
}

interface AuthKeysProps {
  app: Application;
  onAdd: () => void;
  onEdit: (key: PublicJwk) => void;
  onRemove: (kid: string) => void;
}

/** The application's auth keys: a chip per kid (opens it to edit), its expiry mark and a remove button. */
function AuthKeys({ app, onAdd, onEdit, onRemove }: AuthKeysProps) {
  const { t } = useTranslation();
  const keys = Object.values(app.authKeys);
  // Read once per render: a key's mark follows the clock when the card re-renders, like the rest of the page.
  const nowSeconds = Math.floor(Date.now() / 1000);
  const expiry = (key: PublicJwk) => keyExpiryState(key.exp, nowSeconds);
  const expiryIds = useId();
  return (
    <Box component="section" aria-labelledby="auth-keys-title">
      <Box sx={{ display: 'flex', alignItems: 'center', flexWrap: 'wrap', gap: 1 }}>
        <Typography id="auth-keys-title" variant="h3" sx={{ flexGrow: 1 }}>
          {t('authCard.keys')}
        </Typography>
        <GenerateKeyButton applicationId={app.applicationId} />
        <Button variant="outlined" onClick={onAdd} startIcon={<Icon icon={faPlus} />}>
          {t('authCard.addKey')}
        </Button>
      </Box>
      <KeyExpiryWarnings keys={keys} expiry={expiry} />
      {keys.length === 0 ? (
        <Typography color="text.secondary" sx={{ mt: 1 }}>
          {t('authCard.noKeys')}
        </Typography>
      ) : (
        <Box component="ul" sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, listStyle: 'none', p: 0, mt: 1 }}>
          {keys.map((key, i) => (
            <Box component="li" key={key.kid} sx={{ display: 'inline-flex', alignItems: 'center', gap: 0.5, maxWidth: '100%', minWidth: 0 }}>
              <Chip
                label={key.kid}
                aria-label={t('authCard.editKeyLabel', { kid: key.kid })}
                // Tabbing to the chip says it has expired or soon will, not only the words beside it.
                aria-describedby={expiry(key) === 'valid' || key.exp === undefined ? undefined : `${expiryIds}-${i}`}
                onClick={() => onEdit(key)}
                color={expiry(key) === 'expired' ? 'error' : 'default'}
                // A long kid is cut short (the whole of it is in the edit dialog) before its remove button is.
                sx={{ maxWidth: 260, minWidth: 0 }}
              />
              <KeyExpiryMark jwk={key} state={expiry(key)} descriptionId={`${expiryIds}-${i}`} />
              <IconButton size="small" aria-label={t('authCard.removeKeyLabel', { kid: key.kid })} onClick={() => onRemove(key.kid)}>
                <Icon icon={faXmark} />
              </IconButton>
            </Box>
          ))}
        </Box>
      )}
    </Box>
  );
}
