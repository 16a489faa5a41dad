import { zodResolver } from '@hookform/resolvers/zod';
import { createContext, use, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useForm, type DefaultValues, type FieldValues, type Resolver, type UseFormReturn } from 'react-hook-form';
import type * as z from 'zod/mini';
import { canSave } from './dirty-fields';

export interface EditForm<T extends FieldValues> {
  form: UseFormReturn<T, unknown, T>;
  editing: boolean;
  startEdit: () => void;
  cancel: () => void;
  /** After a successful save; the application has been reloaded, so the form resets to it. */
  finish: () => void;
  saveEnabled: boolean;
}

const EditFormContext = createContext<EditForm<FieldValues> | null>(null);

/**
 * Owns one overview card's edit form and hands it to the card's contents through context.
 *
 * react-hook-form re-renders the component that calls `useForm` once right after it mounts (its `isReady`
 * state, set in a layout effect), synchronously, inside the commit that mounted it. Here that component is
 * this scope alone: its `children` were created by the card and its context value is unchanged, so React
 * skips the card's contents instead of rendering each card twice in the overview's longest task
 * (docs/performance.md). The contents bind fields with `Controller` or `useWatch`, which follow the form's
 * values themselves; `register`ed inputs would only pick up a reset when the scope's contents re-render.
 */
export function EditFormScope<T extends FieldValues>({
  schema,
  values,
  children,
}: {
  schema: z.core.$ZodType;
  /** The server's values: the form's defaults, followed while not editing. */
  values: T;
  children: ReactNode;
}) {
  const editForm = useEditForm(schema, values);
  return <EditFormContext value={editForm as unknown as EditForm<FieldValues>}>{children}</EditFormContext>;
}

/** The enclosing card's edit form. */
export function useEditFormContext<T extends FieldValues>(): EditForm<T> {
  const editForm = use(EditFormContext);
  if (!editForm) throw new Error('useEditFormContext must be used inside an EditFormScope');
  return editForm as unknown as EditForm<T>;
}

/**
 * Edit mode as a dirty form: the pen snapshots the server values as the form's defaults, Cancel
 * resets to them, and while not editing the form follows the server object.
 */
function useEditForm<T extends FieldValues>(schema: z.core.$ZodType, serverValues: T): EditForm<T> {
  const [editing, setEditing] = useState(false);
  const form = useForm<T, unknown, T>({
    resolver: zodResolver(schema as never) as unknown as Resolver<T, unknown, T>,
    defaultValues: serverValues as DefaultValues<T>,
    // On change and on leaving a field: an empty required field says 'Required' once touched.
    mode: 'all',
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
  const saveEnabled = canSave(isDirty, isValid, isSubmitting);
  // One object for as long as what it holds is unchanged, so the scope's re-renders stop at the scope.
  return useMemo(
    () => ({
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
      finish: () => setEditing(false),
      saveEnabled,
    }),
    [form, editing, snapshot, saveEnabled],
  );
}
