import { zodResolver } from '@hookform/resolvers/zod';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, type PaperProps } from '@mui/material';
import { useForm, type Resolver } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type * as z from 'zod/mini';
import { FormTextField } from './form-text-field';

type Values = Record<string, string>;

interface Props {
  open: boolean;
  titleId: string;
  title: string;
  /** The schema's one field (`email`, `url`, …); its value is what `onAdd` receives. */
  name: string;
  schema: z.core.$ZodType;
  label: string;
  type: 'email' | 'url';
  paperSx?: PaperProps['sx'];
  onCancel: () => void;
  onAdd: (value: string) => void;
}

/**
 * A dialog that adds one value (an owner's email, a domain): the contract's schema validates as you type
 * and Add stays disabled until it passes.
 */
export function SingleFieldDialog({ open, titleId, paperSx, onCancel, ...form }: Props) {
  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby={titleId} slotProps={{ paper: { sx: paperSx } }}>
      {/* The form lives only while the dialog is shown: it starts empty on every open, and a closed
          dialog validates nothing while its page loads (docs/performance.md). */}
      <SingleFieldForm titleId={titleId} onCancel={onCancel} {...form} />
    </Dialog>
  );
}

function SingleFieldForm({ titleId, title, name, schema, label, type, onCancel, onAdd }: Omit<Props, 'open' | 'paperSx'>) {
  const { t } = useTranslation();
  const form = useForm<Values>({
    resolver: zodResolver(schema as never) as unknown as Resolver<Values>,
    defaultValues: { [name]: '' },
    mode: 'onChange',
  });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        // Dialogs render in a portal but bubble through the React tree: keep the submit out of a card's form.
        e.stopPropagation();
        void form.handleSubmit((values) => onAdd(values[name] ?? ''))(e);
      }}
    >
      <DialogTitle id={titleId}>{title}</DialogTitle>
      <DialogContent>
        <FormTextField control={form.control} name={name} label={label} type={type} required autoFocus />
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
