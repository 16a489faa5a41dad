import { zodResolver } from '@hookform/resolvers/zod';
import { createLockSchema } from '@latchkey/contract';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useId } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';

interface Props {
  open: boolean;
  title: string;
  /** The current name when renaming; empty for a new lock. */
  initialName: string;
  submitLabel: string;
  onCancel: () => void;
  onSubmit: (name: string) => void;
}

/** Names a lock (add or rename): the contract's rule validates as you type. */
export function LockNameDialog({ open, onCancel, ...form }: Props) {
  const titleId = useId();
  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby={titleId} fullWidth maxWidth="xs">
      {/* Mounted only while open, so each opening starts from the given name. */}
      {open && <LockNameForm titleId={titleId} onCancel={onCancel} {...form} />}
    </Dialog>
  );
}

function LockNameForm({
  titleId,
  title,
  initialName,
  submitLabel,
  onCancel,
  onSubmit,
}: Omit<Props, 'open'> & { titleId: string }) {
  const { t } = useTranslation();
  const form = useForm({
    resolver: zodResolver(createLockSchema),
    defaultValues: { name: initialName },
    mode: 'onChange',
  });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit(({ name }) => onSubmit(name.trim()))(e);
      }}
    >
      <DialogTitle id={titleId}>{title}</DialogTitle>
      <DialogContent>
        <FormTextField
          control={form.control}
          name="name"
          label={t('locks.lockName')}
          required
          autoFocus
          fullWidth
          sx={{ mt: 1 }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button
          type="submit"
          variant="contained"
          disabled={!form.formState.isValid || !form.formState.isDirty}
        >
          {submitLabel}
        </Button>
      </DialogActions>
    </form>
  );
}
