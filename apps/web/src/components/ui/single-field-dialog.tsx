import { zodResolver } from '@hookform/resolvers/zod';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, type PaperProps } from '@mui/material';
import { useRef, useState, type ReactNode } from 'react';
import { useForm, useWatch, type Resolver } from 'react-hook-form';
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
  /** Resolves to the reason it failed (shown under the field, the value kept), or to nothing once added. */
  onAdd: (value: string) => Promise<string | null | undefined | void>;
  /** More options under the field (the auth domain's discovery switch). */
  children?: ReactNode;
}

/**
 * A dialog that adds one value (an owner's email, a domain): the contract's schema validates as you type
 * and Add stays disabled until it passes. A refusal shows under the field, with the value kept and focus
 * on it, so it can be corrected without starting again.
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

function SingleFieldForm({ titleId, title, name, schema, label, type, onCancel, onAdd, children }: Omit<Props, 'open' | 'paperSx'>) {
  const { t } = useTranslation();
  // The server's last refusal and the value it refused: validation keeps answering with it until the value
  // is edited, so no re-validation (a blur, the loading dialog of a slow call handing focus back) wipes it.
  const refusal = useRef<{ value: string; message: string } | null>(null);
  const [resolver] = useState(() => {
    const bySchema = zodResolver(schema as never) as unknown as Resolver<Values>;
    const withRefusal: Resolver<Values> = (values, context, options) =>
      refusal.current && values[name] === refusal.current.value
        ? { values: {}, errors: { [name]: { type: 'server', message: refusal.current.message } } }
        : bySchema(values, context, options);
    return withRefusal;
  });
  const form = useForm<Values>({
    resolver,
    defaultValues: { [name]: '' },
    // On change and on leaving a field: an invalid value says why as it is typed, and an empty required
    // field says 'Required' once touched.
    mode: 'all',
  });
  // A refused value may be sent again (the refusal may have been a timeout): Add stays enabled for it.
  const value = useWatch({ control: form.control, name });
  const refusedNow = refusal.current !== null && value === refusal.current.value;
  // Both read on every render: react-hook-form only tracks the flags read, and a short-circuited one goes stale.
  const { isValid, isSubmitting } = form.formState;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        // Dialogs render in a portal but bubble through the React tree: keep the submit out of a card's form.
        e.stopPropagation();
        refusal.current = null;
        void form.handleSubmit(async (values) => {
          const value = values[name] ?? '';
          const failure = await onAdd(value);
          if (!failure) return;
          refusal.current = { value, message: failure };
          form.setError(name, { type: 'server', message: failure });
          // After the loading dialog of a slow call has handed focus back.
          setTimeout(() => form.setFocus(name), 0);
        })(e);
      }}
    >
      <DialogTitle id={titleId}>{title}</DialogTitle>
      <DialogContent>
        <FormTextField control={form.control} name={name} label={label} type={type} required autoFocus />
        {children}
      </DialogContent>
      <DialogActions>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button type="submit" variant="contained" disabled={(!isValid && !refusedNow) || isSubmitting}>
          {t('common.add')}
        </Button>
      </DialogActions>
    </form>
  );
}
