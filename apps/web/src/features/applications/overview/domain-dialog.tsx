import { zodResolver } from '@hookform/resolvers/zod';
import { corsBodySchema, issuerBodySchema } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import type { DomainKind } from '../auth-items-api';

interface Props {
  kind: DomainKind | null;
  onCancel: () => void;
  onAdd: (url: string) => void;
}

/** Add an auth domain (http/https URL) or a CORS domain (https only), validated by the contract. */
export function DomainDialog({ kind, onCancel, onAdd }: Props) {
  return (
    <Dialog open={kind !== null} onClose={onCancel} aria-labelledby="domain-dialog-title">
      {/* The form lives only while the dialog is shown: it starts empty on every open, and a closed
          dialog does not validate anything while the overview loads. */}
      <DomainForm kind={kind} onCancel={onCancel} onAdd={onAdd} />
    </Dialog>
  );
}

function DomainForm({ kind, onCancel, onAdd }: Props) {
  const { t } = useTranslation();
  const form = useForm({ resolver: zodResolver(kind === 'cors' ? corsBodySchema : issuerBodySchema), defaultValues: { url: '' }, mode: 'onChange' });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit(({ url }) => onAdd(url))(e);
      }}
    >
      <DialogTitle id="domain-dialog-title">{kind === 'cors' ? t('authCard.addCorsDomain') : t('authCard.addAuthDomain')}</DialogTitle>
      <DialogContent>
        <FormTextField
          control={form.control}
          name="url"
          label={kind === 'cors' ? t('authCard.corsDomainInput') : t('authCard.authDomainInput')}
          type="url"
          required
          autoFocus
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button type="submit" variant="contained" disabled={!form.formState.isValid}>
          {t('common.add')}
        </Button>
      </DialogActions>
    </form>
  );
}
