import { zodResolver } from '@hookform/resolvers/zod';
import { LOCATION_ACCURACIES, LOCATION_ACCURACY_LIMIT_M, type Lock } from '@latchkey/contract';
import { Box, Button, FormControlLabel, MenuItem, Switch, Typography } from '@mui/material';
import { memo, useCallback, useEffect, useRef } from 'react';
import { Controller, useForm, useFormState, useWatch, type Control, type Resolver, type UseFormTrigger } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { showFieldErrors } from '../../../lib/field-errors';
import { useUpdateLock } from '../api';
import {
  GRACE_UNITS,
  OFFLINE_GRACE_CHOICES,
  settingsValues,
  settingsWithLocationSchema,
  settingsWithoutLocationSchema,
  toUpdateLock,
  type SettingsFormValues,
} from './settings-form';

const withLocation = zodResolver(settingsWithLocationSchema);
const withoutLocation = zodResolver(settingsWithoutLocationSchema);
/** The location fields are checked only while the rule is on. */
const resolver: Resolver<SettingsFormValues> = (values, context, options) =>
  (values.locationEnabled ? withLocation : withoutLocation)(values, context, options as never) as ReturnType<
    Resolver<SettingsFormValues>
  >;

/**
 * Unlock time, the offline grace (how long a door the internet has lost keeps obeying phones), and the map-free location rule (a point, a radius, and the accuracy tier a position needs); for a
 * lock with a device, which local addresses it may offer users' apps for direct access.
 *
 * react-hook-form re-renders the component that calls `useForm` right after it mounts (and again once its
 * validity is known), synchronously inside the commit that mounted it. The fields and buttons are memoised
 * children bound to the form's stable `control`, so those re-renders stop at this card's frame instead of
 * redrawing every field in the lock page's longest task (docs/performance.md).
 */
export function SettingsCard({ appId, lock }: { appId: string; lock: Lock }) {
  const { t } = useTranslation();
  const update = useUpdateLock(appId);
  const { run, dialogs } = useOperation();
  const form = useForm<SettingsFormValues>({
    resolver,
    defaultValues: settingsValues(lock),
    mode: 'all',
  });
  const { isDirty } = form.formState;
  const { reset } = form;

  // A change made elsewhere (another tab, an operation) shows here unless the form is being edited.
  useEffect(() => {
    if (!isDirty) reset(settingsValues(lock));
  }, [lock, isDirty, reset]);
  const onReset = useCallback(() => reset(settingsValues(lock)), [reset, lock]);

  return (
    <SectionCard headingId="settings-heading" title={t('lockSettings.title')} headerGap={2}>
      <form
        noValidate
        onSubmit={(e) =>
          void form.handleSubmit(async (values) => {
            const saved = await run(
              () =>
                update.mutateAsync({
                  lockId: lock.id,
                  body: toUpdateLock(values, form.formState.dirtyFields, lock),
                }),
              // The one non-blocking notice every save gives; a refused field shows under it, focused.
              { notice: t('lockSettings.saved'), inPlace: (error) => showFieldErrors(form, error) },
            );
            if (saved.ok) reset(settingsValues(saved.value));
          })(e)
        }
      >
        <SettingsFields control={form.control} trigger={form.trigger} />
        <SettingsActions control={form.control} onReset={onReset} />
      </form>
      {lock.device ? (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 2 }}>
          {t('lockSettings.directAccess')}
        </Typography>
      ) : null}
      {dialogs}
    </SectionCard>
  );
}

const SettingsFields = memo(function SettingsFields({
  control,
  trigger,
}: {
  control: Control<SettingsFormValues>;
  trigger: UseFormTrigger<SettingsFormValues>;
}) {
  const { t } = useTranslation();
  const locationEnabled = useWatch({ control, name: 'locationEnabled' });
  const offlineGrace = useWatch({ control, name: 'offlineGrace' });
  const graceUnit = useWatch({ control, name: 'graceUnit' });
  // The grace's number is checked with its unit: another unit may put the same number out of range.
  const unitShown = useRef(graceUnit);
  useEffect(() => {
    if (unitShown.current === graceUnit) return;
    unitShown.current = graceUnit;
    void trigger('graceAmount');
  }, [graceUnit, trigger]);
  return (
    <>
      <FormTextField
        control={control}
        name="unlockTime"
        type="number"
        label={t('lockSettings.unlockTime')}
        helperText={t('lockSettings.unlockTimeHelp')}
        slotProps={{ htmlInput: { min: 1, max: 60, step: 1, inputMode: 'numeric' } }}
        fullWidth
      />
      <FormTextField
        control={control}
        name="offlineGrace"
        label={t('lockSettings.offlineGrace')}
        helperText={t('lockSettings.offlineGraceHelp')}
        select
        fullWidth
        sx={{ mt: 3 }}
      >
        {[...OFFLINE_GRACE_CHOICES, 'custom' as const].map((choice) => (
          <MenuItem key={choice} value={choice}>
            {t(`lockSettings.graceChoices.${choice}`)}
          </MenuItem>
        ))}
      </FormTextField>
      {offlineGrace === 'custom' && (
        <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, gap: 2, mt: 2 }}>
          <FormTextField
            control={control}
            name="graceAmount"
            type="number"
            label={t('lockSettings.graceAmount')}
            slotProps={{ htmlInput: { min: 1, step: 1, inputMode: 'numeric' } }}
          />
          <FormTextField control={control} name="graceUnit" label={t('lockSettings.graceUnit')} select>
            {(Object.keys(GRACE_UNITS) as (keyof typeof GRACE_UNITS)[]).map((unit) => (
              <MenuItem key={unit} value={unit}>
                {t(`lockSettings.graceUnits.${unit}`)}
              </MenuItem>
            ))}
          </FormTextField>
        </Box>
      )}
      <Typography variant="h3" component="h3" sx={{ mt: 3, mb: 1 }}>
        {t('lockSettings.location')}
      </Typography>
      <Controller
        control={control}
        name="locationEnabled"
        render={({ field }) => (
          <FormControlLabel
            control={<Switch checked={field.value} onChange={(_e, on) => field.onChange(on)} />}
            label={t('lockSettings.locationEnabled')}
          />
        )}
      />
      {locationEnabled && (
        <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, gap: 2, mt: 2 }}>
          <FormTextField
            control={control}
            name="latitude"
            type="number"
            label={t('lockSettings.latitude')}
            slotProps={{ htmlInput: { step: 'any' } }}
          />
          <FormTextField
            control={control}
            name="longitude"
            type="number"
            label={t('lockSettings.longitude')}
            slotProps={{ htmlInput: { step: 'any' } }}
          />
          <FormTextField
            control={control}
            name="radius"
            type="number"
            label={t('lockSettings.radius')}
            slotProps={{ htmlInput: { min: 1, step: 1 } }}
          />
          <FormTextField control={control} name="accuracy" label={t('lockSettings.accuracy')} select>
            {LOCATION_ACCURACIES.map((tier) => (
              <MenuItem key={tier} value={tier}>
                {t('lockSettings.accuracyTier', {
                  tier: t(`lockSettings.tiers.${tier}`),
                  metres: LOCATION_ACCURACY_LIMIT_M[tier],
                })}
              </MenuItem>
            ))}
          </FormTextField>
        </Box>
      )}
    </>
  );
});

const SettingsActions = memo(function SettingsActions({
  control,
  onReset,
}: {
  control: Control<SettingsFormValues>;
  onReset: () => void;
}) {
  const { t } = useTranslation();
  const { isDirty, isValid } = useFormState({ control });
  return (
    <Box sx={{ display: 'flex', gap: 1, justifyContent: 'flex-end', mt: 3 }}>
      <Button disabled={!isDirty} onClick={onReset}>
        {t('lockSettings.reset')}
      </Button>
      <Button type="submit" variant="contained" disabled={!isDirty || !isValid}>
        {t('common.save')}
      </Button>
    </Box>
  );
});
