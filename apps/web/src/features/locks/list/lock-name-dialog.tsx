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
  /** The field's label; the lock's name when left out (a site's dialog names a site). */
  label?: string;
  onCancel: () => void;
  /** Resolves to the reason it failed (shown under the field, the name kept), or to null once saved. */
  onSubmit: (name: string) => Promise<string | null>;
}

/**
 * Names a lock (add or rename): the contract's rule validates as you type. The dialog stays open until the
 * server took the name; a refusal shows under the field with the name kept and focus on it.
 */
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
  label,
  onCancel,
  onSubmit,
}: Omit<Props, 'open'> & { titleId: string }) {
  const { t } = useTranslation();
  const form = useForm({
    resolver: zodResolver(createLockSchema),
    defaultValues: { name: initialName },
    // On change and on leaving a field: an emptied name says 'Required' once touched.
    mode: 'all',
  });
  // Read every flag on each render: react-hook-form only tracks the ones read, and a short-circuited
  // `isDirty` (unread while the form was invalid) stayed false after the first keystroke or a paste.
  const { isValid, isDirty, isSubmitting } = form.formState;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit(async ({ name }) => {
          const failure = await onSubmit(name.trim());
          if (failure) form.setError('name', { type: 'server', message: failure }, { shouldFocus: true });
        })(e);
      }}
    >
      <DialogTitle id={titleId}>{title}</DialogTitle>
      <DialogContent>
        <FormTextField
          control={form.control}
          name="name"
          label={label ?? t('locks.lockName')}
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
          disabled={!isValid || !isDirty || isSubmitting}
        >
          {submitLabel}
        </Button>
      </DialogActions>
    </form>
  );
}
