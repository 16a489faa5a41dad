import { TextField, type TextFieldProps } from '@mui/material';
import { Controller, type Control, type FieldPath, type FieldValues } from 'react-hook-form';
import { localText } from '../../lib/server-text';

type Props<T extends FieldValues> = Omit<TextFieldProps, 'name' | 'value' | 'onChange' | 'onBlur' | 'error'> & {
  control: Control<T>;
  name: FieldPath<T>;
  /**
   * A multi-line field showing at least this many lines and growing with its text, without measuring the
   * page. For text that is one long wrapping line (a token), use MUI's `multiline` + `minRows` instead.
   */
  minLines?: number;
};

/** MUI's line height for input text (InputBase), so `minLines` rows are as tall as MUI's own `rows`. */
const LINE_HEIGHT_EM = 1.4375;

/**
 * An outlined MUI text field bound to react-hook-form; the helper text shows the contract's message.
 *
 * Multi-line fields grow without measuring the page: MUI's autosizing textarea (used for `minRows`, and
 * for `rows` too) reads computed styles in a layout effect, a forced layout on every mount that made the
 * overview's first render one long task on slow phones (docs/performance.md). Here the field has as many
 * rows as its text has lines, and `field-sizing: content` also counts wrapped lines where the browser
 * supports it.
 */
export function FormTextField<T extends FieldValues>({ control, name, helperText, minLines, sx, ...rest }: Props<T>) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => {
        const value = field.value ?? '';
        const multiLine = minLines !== undefined && {
          multiline: true,
          rows: Math.max(minLines, String(value).split('\n').length),
          // A plain textarea: with `multiline`, MUI otherwise renders its autosizing one even for fixed `rows`.
          slotProps: { ...rest.slotProps, input: { ...rest.slotProps?.input, inputComponent: 'textarea' as const } },
          sx: [
            { '& textarea': { fieldSizing: 'content', minHeight: `${minLines * LINE_HEIGHT_EM}em` } },
            ...(Array.isArray(sx) ? sx : [sx]),
          ],
        };
        return (
          <TextField
            {...rest}
            sx={sx}
            {...multiLine}
            name={field.name}
            value={value}
            onChange={field.onChange}
            onBlur={field.onBlur}
            inputRef={field.ref}
            error={fieldState.error !== undefined}
            helperText={fieldState.error?.message ? localText(fieldState.error.message) : helperText}
          />
        );
      }}
    />
  );
}
