import { zodResolver } from '@hookform/resolvers/zod';
import { addApplicationUserSchema, OWNER_DIALOG_MAX_WIDTH_PX, OWNER_DIALOG_MIN_WIDTH_PX } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
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
  // On change and on leaving the field: an empty one says 'Required' once touched.
  const form = useForm({ resolver: zodResolver(addApplicationUserSchema), defaultValues: { email: '' }, mode: 'all' });
  const { reset } = form;
  const { reset: resetAdd } = add;
  useEffect(() => {
    if (open) {
      reset({ email: '' });
      resetAdd();
    }
  }, [open, reset, resetAdd]);


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
          // A refusal (409 already added, …) goes under the field, which keeps the email and takes focus.
          void form.handleSubmit(({ email }) =>
            add.mutate(email, {
              onSuccess: (user) => onAdded(user.email ?? email),
              onError: (error) => form.setError('email', { type: 'server', message: errorMessage(error) }, { shouldFocus: true }),
            }),
          )(e);
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
