import { Box, TextField } from '@mui/material';
import { Controller, useFormContext } from 'react-hook-form';
import { toSixDigitHex } from '../../lib/colour';
import { localText } from '../../lib/server-text';

/** A hex colour text field with the browser's native picker beside it; both edit the same value. */
export function ColourField({ name, label, pickerLabel, disabled = false }: { name: string; label: string; pickerLabel: string; disabled?: boolean }) {
  const { control } = useFormContext<Record<string, string>>();
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => (
        <Box sx={{ display: 'flex', alignItems: 'flex-start', gap: 1 }}>
          <TextField
            label={label}
            name={field.name}
            value={field.value ?? ''}
            onChange={field.onChange}
            onBlur={field.onBlur}
            inputRef={field.ref}
            disabled={disabled}
            required
            error={fieldState.error !== undefined}
            helperText={fieldState.error?.message && localText(fieldState.error.message)}
          />
          <Box
            component="input"
            type="color"
            aria-label={pickerLabel}
            value={toSixDigitHex(field.value ?? '')}
            disabled={disabled}
            onChange={(e: React.ChangeEvent<HTMLInputElement>) => field.onChange(e.target.value.toUpperCase())}
            sx={{ mt: 2, width: 56, height: 56, p: 0.5, border: 1, borderColor: 'grey.500', borderRadius: 1, bgcolor: 'background.paper', cursor: 'pointer', flexShrink: 0 }}
          />
        </Box>
      )}
    />
  );
}
