import { zodResolver } from '@hookform/resolvers/zod';
import { directoryQuerySchema, OWNER_DIALOG_MAX_WIDTH_PX, OWNER_DIALOG_MIN_WIDTH_PX } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';

interface Props {
  open: boolean;
  onCancel: () => void;
  onAdd: (email: string) => void;
}

/** Enter an email; Add stays disabled until it is a valid address. The lookup happens on Add. */
export function AddOwnerDialog({ open, onCancel, onAdd }: Props) {
  return (
    <Dialog
      open={open}
      onClose={onCancel}
      aria-labelledby="add-owner-title"
      slotProps={{ paper: { sx: { minWidth: { sm: OWNER_DIALOG_MIN_WIDTH_PX }, maxWidth: OWNER_DIALOG_MAX_WIDTH_PX } } }}
    >
      {/* The form lives only while the dialog is shown: it starts empty on every open, and a closed
          dialog does not validate anything while the overview loads. */}
      <AddOwnerForm onCancel={onCancel} onAdd={onAdd} />
    </Dialog>
  );
}

function AddOwnerForm({ onCancel, onAdd }: Omit<Props, 'open'>) {
  const { t } = useTranslation();
  const form = useForm({ resolver: zodResolver(directoryQuerySchema), defaultValues: { email: '' }, mode: 'onChange' });
  return (
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
  );
}
