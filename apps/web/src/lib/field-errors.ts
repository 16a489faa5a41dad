import type { FieldPath, FieldValues, UseFormReturn } from 'react-hook-form';
import { ApiError } from './http';
import { localText } from './server-text';

/**
 * A save the server refused field by field: each message goes under its field and keyboard focus moves
 * to the first of them, as a failed check in the browser does. Returns whether any field took a message
 * (otherwise the caller shows the failure as a whole).
 */
export function showFieldErrors<T extends FieldValues>(form: UseFormReturn<T, unknown, T>, error: unknown, prefix = ''): boolean {
  if (!(error instanceof ApiError)) return false;
  const values = form.getValues();
  const known = error.fieldErrors
    .map((e) => ({ ...e, path: e.path.startsWith(prefix) ? e.path.slice(prefix.length) : e.path }))
    .filter((e) => (e.path.split('.')[0] ?? '') in values);
  known.forEach((e, i) => form.setError(e.path as FieldPath<T>, { type: 'server', message: localText(e.message) }, { shouldFocus: i === 0 }));
  return known.length > 0;
}

/** The server's message for one field of a refused save, in the reader's language, if it named that field. */
export function fieldMessage(error: unknown, path: string): string | null {
  if (!(error instanceof ApiError)) return null;
  const found = error.fieldErrors.find((e) => e.path === path);
  return found ? localText(found.message) : null;
}
