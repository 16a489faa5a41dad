import { zodResolver } from '@hookform/resolvers/zod';
import { useEffect, useRef, useState } from 'react';
import { useForm, type DefaultValues, type FieldValues, type Resolver } from 'react-hook-form';
import type * as z from 'zod/mini';
import { canSave } from './dirty-fields';

/**
 * Edit mode as a dirty form: the pen snapshots the server values as the form's defaults, Cancel
 * resets to them, and while not editing the form follows the server object.
 */
export function useEditForm<T extends FieldValues>(schema: z.core.$ZodType, serverValues: T) {
  const [editing, setEditing] = useState(false);
  const form = useForm<T, unknown, T>({
    resolver: zodResolver(schema as never) as unknown as Resolver<T, unknown, T>,
    defaultValues: serverValues as DefaultValues<T>,
    mode: 'onChange',
  });
  const snapshot = JSON.stringify(serverValues);

  // Follow the server object when it changes, and leave edit mode on its values. Not on mount: the form
  // already starts from them, and a reset there re-renders every card once more while the page loads.
  const synced = useRef({ snapshot, editing });
  useEffect(() => {
    const before = synced.current;
    synced.current = { snapshot, editing };
    if (!editing && (before.snapshot !== snapshot || before.editing)) form.reset(JSON.parse(snapshot) as T);
  }, [snapshot, editing, form]);

  // Validity is read (and so computed by react-hook-form) only while editing: it only gates Save, and
  // validating every card's form on mount was a measurable part of the overview's load (docs/performance.md).
  const { isDirty, isSubmitting } = form.formState;
  const isValid = editing && form.formState.isValid;
  return {
    form,
    editing,
    startEdit: () => {
      form.reset(JSON.parse(snapshot) as T);
      setEditing(true);
    },
    cancel: () => {
      form.reset(JSON.parse(snapshot) as T);
      setEditing(false);
    },
    /** After a successful save; the application has been reloaded, so the effect resets to it. */
    finish: () => setEditing(false),
    saveEnabled: canSave(isDirty, isValid, isSubmitting),
  };
}
