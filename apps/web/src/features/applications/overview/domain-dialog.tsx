import { corsBodySchema, issuerBodySchema } from '@latchkey/contract';
import { Checkbox, FormControlLabel, FormHelperText } from '@mui/material';
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { SingleFieldDialog } from '../../../components/ui/single-field-dialog';
import type { DomainKind } from '../auth-items-api';

interface Props {
  kind: DomainKind | null;
  onCancel: () => void;
  /** `discovery`: an auth domain whose OpenID configuration and keys the platform loads and follows. */
  onAdd: (url: string, discovery: boolean) => Promise<string | null>;
}

/**
 * Add an auth domain (http/https URL) or a CORS domain (https only), validated by the contract. An auth
 * domain may come with OpenID discovery; the platform then checks the issuer before storing anything, and
 * a refusal (not https, private address, no or invalid configuration) shows under the field.
 */
export function DomainDialog({ kind, onCancel, onAdd }: Props) {
  const { t } = useTranslation();
  const cors = kind === 'cors';
  const [discovery, setDiscovery] = useState(false);
  const helpId = useId();
  useEffect(() => {
    if (kind !== null) setDiscovery(false);
  }, [kind]);
  return (
    <SingleFieldDialog
      open={kind !== null}
      titleId="domain-dialog-title"
      title={cors ? t('authCard.addCorsDomain') : t('authCard.addAuthDomain')}
      name="url"
      schema={cors ? corsBodySchema : issuerBodySchema}
      label={cors ? t('authCard.corsDomainInput') : t('authCard.authDomainInput')}
      type="url"
      onCancel={onCancel}
      onAdd={(url) => onAdd(url, !cors && discovery)}
    >
      {cors ? null : (
        <>
          <FormControlLabel
            sx={{ mt: 1 }}
            control={<Checkbox checked={discovery} onChange={(e) => setDiscovery(e.target.checked)} slotProps={{ input: { 'aria-describedby': helpId } }} />}
            label={t('issuerKeys.discovery')}
          />
          <FormHelperText id={helpId} sx={{ mt: -0.5 }}>
            {t('issuerKeys.discoveryHelp')}
          </FormHelperText>
        </>
      )}
    </SingleFieldDialog>
  );
}
