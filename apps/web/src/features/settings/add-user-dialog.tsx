import { zodResolver } from '@hookform/resolvers/zod';
import { addApplicationUserSchema, OWNER_DIALOG_MAX_WIDTH_PX, OWNER_DIALOG_MIN_WIDTH_PX } from '@latchkey/contract';
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useEffect } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../components/ui/form-text-field';
import { errorMessage } from '../../lib/http';
import { useAddUser } from './users-api';

interface Props {
  applicationId: string;
  open: boolean;
  onCancel: () => void;
  onAdded: (email: string) => void;
}

/**
 * Add a partner user by email (pending until their first sign-in). The contract's email rule validates
 * as you type; a refusal from the server (409 already added, …) stays in the dialog so the email can be fixed.
 */
export function AddUserDialog({ applicationId, open, onCancel, onAdded }: Props) {
  const { t } = useTranslation();
  const add = useAddUser(applicationId);
  const form = useForm({ resolver: zodResolver(addApplicationUserSchema), defaultValues: { email: '' }, mode: 'onChange' });
  const { reset } = form;
  const { reset: resetAdd } = add;
  useEffect(() => {
    if (open) {
      reset({ email: '' });
      resetAdd();
    }
  }, [open, reset, resetAdd]);

  // The server's refusal belongs to the email it was about; editing the field hides it.
  const current = form.watch('email').trim();
  const serverError = add.isError && add.variables === current ? errorMessage(add.error) : null;

  return (
    <Dialog
      open={open}
      onClose={onCancel}
      aria-labelledby="add-user-title"
      slotProps={{ paper: { sx: { minWidth: { sm: OWNER_DIALOG_MIN_WIDTH_PX }, maxWidth: OWNER_DIALOG_MAX_WIDTH_PX } } }}
    >
      <form
        noValidate
        onSubmit={(e) => {
          e.stopPropagation();
          void form.handleSubmit(({ email }) => add.mutate(email, { onSuccess: (user) => onAdded(user.email ?? email) }))(e);
        }}
      >
        <DialogTitle id="add-user-title">{t('settings.addUser')}</DialogTitle>
        <DialogContent>
          <FormTextField
            control={form.control}
            name="email"
            label={t('settings.addUserEmail')}
            helperText={t('settings.addUserHelp')}
            type="email"
            required
            autoFocus
          />
          {serverError && (
            <Alert severity="error" sx={{ mt: 2 }}>
              {serverError}
            </Alert>
          )}
        </DialogContent>
        <DialogActions>
          <Button onClick={onCancel}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={!form.formState.isValid || add.isPending}>
            {t('common.add')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
