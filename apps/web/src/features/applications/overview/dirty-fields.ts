/**
 * Edit mode is a dirty form, so a card sends only what changed: react-hook-form tracks which fields differ from the
 * snapshot; a field typed back to its original is no longer dirty. These pick what a card sends.
 */
type DirtyMap = Partial<Record<string, unknown>>;

const isDirtyFlag = (flag: unknown): boolean =>
  flag === true || (typeof flag === 'object' && flag !== null && Object.values(flag).some(isDirtyFlag));

/** Only the fields marked dirty. */
export function pickDirty<T extends Record<string, unknown>>(values: T, dirty: DirtyMap): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(values) as (keyof T & string)[]) {
    if (isDirtyFlag(dirty[key])) out[key] = values[key];
  }
  return out;
}

/** Company URLs: dirty fields only, and an emptied field clears the value (null) rather than saving ''. */
export function pickDirtyEmptyAsNull<T extends Record<string, string>>(values: T, dirty: DirtyMap): Partial<Record<keyof T, string | null>> {
  const out: Partial<Record<keyof T, string | null>> = {};
  for (const [key, value] of Object.entries(pickDirty(values, dirty)) as [keyof T, string][]) {
    out[key] = value.trim() === '' ? null : value.trim();
  }
  return out;
}

/** Save is offered only when something changed and everything is valid. */
export const canSave = (isDirty: boolean, isValid: boolean, busy = false): boolean => isDirty && isValid && !busy;
