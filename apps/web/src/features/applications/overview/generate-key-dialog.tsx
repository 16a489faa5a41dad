import { faKey } from '@fortawesome/free-solid-svg-icons';
import {
  Alert,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  FormControl,
  FormControlLabel,
  FormLabel,
  Radio,
  RadioGroup,
} from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { errorMessage } from '../../../lib/http';
import { useAuthItemAction } from '../auth-items-api';
import type { KeyKind, PrivateKeyFormat } from '../../../lib/key-pair';

type Outcome = { kind: 'added'; kid: string; alg: string; file: string } | { kind: 'failed'; message: string; file: string | null };

/**
 * "Generate a key pair" — made in this browser (WebCrypto), the private half saved once as
 * a file on this computer (never sent), the public half added as an Auth Key with its thumbprint as kid.
 * The key code is loaded when the dialog is used, not with the page.
 */
export function GenerateKeyButton({ applicationId, variant = 'outlined' }: { applicationId: string; variant?: 'outlined' | 'contained' }) {
  const { t } = useTranslation();
  const action = useAuthItemAction(applicationId);
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<KeyKind>('Ed25519');
  const [format, setFormat] = useState<PrivateKeyFormat>('jwk');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const titleId = useId();
  const kindId = useId();
  const formatId = useId();

  const start = () => {
    setOutcome(null);
    setOpen(true);
  };

  const generate = async () => {
    setBusy(true);
    let file: string | null = null;
    try {
      const keys = await import('../../../lib/key-pair');
      const pair = await keys.generateAuthKeyPair(kind);
      const saved = keys.privateKeyFile(pair, format);
      // Saved first: a key whose private half is not on this computer would be of no use to anyone.
      keys.downloadFile(saved);
      file = saved.name;
      // The backend guide names this file in its command (a PEM is not where a JWK would be).
      keys.rememberKeyFormat(pair.publicJwk.kid, format);
      await action.mutateAsync({ type: 'add-key', key: pair.publicJwk });
      setOutcome({ kind: 'added', kid: pair.publicJwk.kid, alg: pair.publicJwk.alg ?? '', file });
    } catch (error) {
      const unsupported = error instanceof DOMException && error.name === 'NotSupportedError';
      setOutcome({ kind: 'failed', message: unsupported ? t('generateKey.unsupported', { kind }) : errorMessage(error), file });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Button variant={variant} onClick={start} startIcon={<Icon icon={faKey} />}>
        {t('generateKey.open')}
      </Button>
      <Dialog open={open} onClose={() => !busy && setOpen(false)} aria-labelledby={titleId} maxWidth="sm" fullWidth>
        <DialogTitle id={titleId}>{t('generateKey.title')}</DialogTitle>
        <DialogContent>
          {outcome?.kind === 'added' ? (
            <Alert severity="success" role="status" sx={{ overflowWrap: 'anywhere' }}>
              {t('generateKey.added', { kid: outcome.kid, alg: outcome.alg, file: outcome.file })}
            </Alert>
          ) : (
            <>
              <DialogContentText sx={{ mb: 2 }}>{t('generateKey.intro')}</DialogContentText>
              <FormControl sx={{ mb: 2, display: 'block' }}>
                <FormLabel id={kindId}>{t('generateKey.kind')}</FormLabel>
                <RadioGroup aria-labelledby={kindId} value={kind} onChange={(e) => setKind(e.target.value as KeyKind)}>
                  <FormControlLabel value="Ed25519" control={<Radio />} label={t('generateKey.ed25519')} />
                  <FormControlLabel value="ES256" control={<Radio />} label={t('generateKey.es256')} />
                </RadioGroup>
              </FormControl>
              <FormControl sx={{ display: 'block' }}>
                <FormLabel id={formatId}>{t('generateKey.format')}</FormLabel>
                <RadioGroup aria-labelledby={formatId} value={format} onChange={(e) => setFormat(e.target.value as PrivateKeyFormat)}>
                  <FormControlLabel value="jwk" control={<Radio />} label={t('generateKey.jwk')} />
                  <FormControlLabel value="pem" control={<Radio />} label={t('generateKey.pem')} />
                </RadioGroup>
              </FormControl>
              <Alert severity="info" sx={{ mt: 2 }}>
                {t('generateKey.once')}
              </Alert>
              {outcome?.kind === 'failed' && (
                <Alert severity="error" sx={{ mt: 2, overflowWrap: 'anywhere' }}>
                  {outcome.file ? t('generateKey.addFailed', { message: outcome.message, file: outcome.file }) : outcome.message}
                </Alert>
              )}
            </>
          )}
        </DialogContent>
        <DialogActions>
          {outcome?.kind === 'added' ? (
            <Button variant="contained" onClick={() => setOpen(false)}>
              {t('common.done')}
            </Button>
          ) : (
            <>
              <Button onClick={() => setOpen(false)} disabled={busy}>
                {t('common.cancel')}
              </Button>
              <Button variant="contained" onClick={() => void generate()} disabled={busy}>
                {t('generateKey.confirm')}
              </Button>
            </>
          )}
        </DialogActions>
      </Dialog>
    </>
  );
}
