import { FormControl, FormHelperText, InputLabel, OutlinedInput } from '@mui/material';
import { useId } from 'react';
import { Controller, type Control, type FieldPath, type FieldValues } from 'react-hook-form';
import { localText } from '../../lib/server-text';

interface Props<T extends FieldValues> {
  control: Control<T>;
  name: FieldPath<T>;
  label: string;
  type?: 'email' | 'password' | 'text';
  autoComplete: string;
  required?: boolean;
}

/**
 * The sign-in screens' text field: what the shared FormTextField renders (MUI's outlined TextField with the
 * theme's fullWidth and normal margin, the contract's message as helper text), built from TextField's own
 * parts. TextField imports Select, with Menu and Popover, and the filled and standard inputs whatever the
 * variant; on /login, the one screen with a page-weight budget, that is ~18 KB gzip of unused code.
 */
export function AuthTextField<T extends FieldValues>({ control, name, label, type = 'text', autoComplete, required = false }: Props<T>) {
  const id = useId();
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => (
        <FormControl fullWidth margin="normal" required={required} error={fieldState.error !== undefined}>
          <InputLabel htmlFor={id} id={`${id}-label`}>
            {label}
          </InputLabel>
          <OutlinedInput
            id={id}
            label={label}
            fullWidth
            type={type}
            autoComplete={autoComplete}
            name={field.name}
            value={field.value ?? ''}
            onChange={field.onChange}
            onBlur={field.onBlur}
            inputRef={field.ref}
            aria-describedby={fieldState.error ? `${id}-helper-text` : undefined}
          />
          {fieldState.error?.message && <FormHelperText id={`${id}-helper-text`}>{localText(fieldState.error.message)}</FormHelperText>}
        </FormControl>
      )}
    />
  );
}
