import { zodResolver } from '@hookform/resolvers/zod';
import { corsBodySchema, issuerBodySchema } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useEffect } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import type { DomainKind } from '../auth-items-api';

/** Add an auth domain (http/https URL) or a CORS domain (https only), validated by the contract. */
export function DomainDialog({ kind, onCancel, onAdd }: { kind: DomainKind | null; onCancel: () => void; onAdd: (url: string) => void }) {
  const { t } = useTranslation();
  const schema = kind === 'cors' ? corsBodySchema : issuerBodySchema;
  const form = useForm({ resolver: zodResolver(schema), defaultValues: { url: '' }, mode: 'onChange' });
  useEffect(() => {
    if (kind) form.reset({ url: '' });
  }, [kind, form]);

  const title = kind === 'cors' ? t('authCard.addCorsDomain') : t('authCard.addAuthDomain');
  return (
    <Dialog open={kind !== null} onClose={onCancel} aria-labelledby="domain-dialog-title">
      <form
        noValidate
        onSubmit={(e) => {
          e.stopPropagation();
          void form.handleSubmit(({ url }) => onAdd(url))(e);
        }}
      >
        <DialogTitle id="domain-dialog-title">{title}</DialogTitle>
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
    </Dialog>
  );
}
