import { SUGGESTED_ACTION_TEXTS, type CallToAction } from '@latchkey/contract';
import { Box, FormControlLabel, Switch, TextField } from '@mui/material';
import { useRef } from 'react';
import { Controller, useFormContext, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { toggleCallToAction } from './call-to-action';

type CtaForm = { callToAction: CallToAction | null };
const FIELDS = [
  ['headline', 'wizard.ctaHeadline'],
  ['actionText', 'wizard.ctaActionText'],
  ['actionTarget', 'wizard.ctaActionTarget'],
] as const;

/**
 * The call-to-action switch and its three fields; reads the surrounding form through FormProvider.
 * `supportContact`: the application's own support URL or mailto:, the button's target when switched on.
 */
export function CallToActionFields({ disabled = false, supportContact = null }: { disabled?: boolean; supportContact?: string | null }) {
  const { t } = useTranslation();
  const { control, setValue, getValues } = useFormContext<CtaForm>();
  const cta = useWatch({ control, name: 'callToAction' });
  const stored = useRef<CallToAction | null>(null);

  const onToggle = (on: boolean) => {
    const result = toggleCallToAction(on, getValues('callToAction'), stored.current, supportContact);
    stored.current = result.stored;
    setValue('callToAction', result.next, { shouldDirty: true, shouldValidate: true, shouldTouch: true });
  };

  return (
    <Box>
      <FormControlLabel
        control={<Switch checked={cta !== null} onChange={(e) => onToggle(e.target.checked)} disabled={disabled} />}
        label={t('wizard.callToAction')}
      />
      {cta !== null &&
        FIELDS.map(([field, label]) => (
          <Controller
            key={field}
            control={control}
            name={`callToAction.${field}`}
            render={({ field: f, fieldState }) => (
              <TextField
                label={t(label)}
                name={f.name}
                value={f.value ?? ''}
                onChange={f.onChange}
                onBlur={f.onBlur}
                inputRef={f.ref}
                disabled={disabled}
                required
                error={fieldState.error !== undefined}
                helperText={
                  fieldState.error?.message ??
                  (field === 'actionText' && !disabled ? SUGGESTED_ACTION_TEXTS.join(' · ') : undefined)
                }
              />
            )}
          />
        ))}
    </Box>
  );
}
