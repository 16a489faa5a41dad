import { zodResolver } from '@hookform/resolvers/zod';
import { directoryQuerySchema, OWNER_DIALOG_MAX_WIDTH_PX, OWNER_DIALOG_MIN_WIDTH_PX } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useEffect } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';

/** Enter an email; Add stays disabled until it is a valid address. The lookup happens on Add. */
export function AddOwnerDialog({ open, onCancel, onAdd }: { open: boolean; onCancel: () => void; onAdd: (email: string) => void }) {
  const { t } = useTranslation();
  const form = useForm({ resolver: zodResolver(directoryQuerySchema), defaultValues: { email: '' }, mode: 'onChange' });
  useEffect(() => {
    if (open) form.reset({ email: '' });
  }, [open, form]);

  return (
    <Dialog
      open={open}
      onClose={onCancel}
      aria-labelledby="add-owner-title"
      slotProps={{ paper: { sx: { minWidth: { sm: OWNER_DIALOG_MIN_WIDTH_PX }, maxWidth: OWNER_DIALOG_MAX_WIDTH_PX } } }}
    >
      <form
        noValidate
        onSubmit={(e) => {
          e.stopPropagation();
          void form.handleSubmit(({ email }) => onAdd(email))(e);
        }}
      >
        <DialogTitle id="add-owner-title">{t('owners.addOwner')}</DialogTitle>
        <DialogContent>
          <FormTextField control={form.control} name="email" label={t('owners.ownerEmail')} type="email" required autoFocus />
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
