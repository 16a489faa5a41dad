import { zodResolver } from '@hookform/resolvers/zod';
import { LOCK_ROLES, WEEKDAYS, type Weekday } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormHelperText,
  FormLabel,
  MenuItem,
  Switch,
} from '@mui/material';
import { useId, useMemo } from 'react';
import { Controller, useForm, useWatch, type Control, type Resolver } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { showFieldErrors } from '../../../lib/field-errors';
import { ApiError, errorMessage } from '../../../lib/http';
import { localText } from '../../../lib/server-text';
import { pickerFormat } from '../../../lib/dates';
import { useAddShare } from '../shares-api';
import {
  defaultShareValues,
  knownTimeZones,
  shareFormSchema,
  shareFormWithoutWindowSchema,
  toCreateShare,
  type ShareFormValues,
} from './share-form';

const hasFieldErrors = (error: unknown) => error instanceof ApiError && error.fieldErrors.length > 0;

const withWindow = zodResolver(shareFormSchema);
const withoutWindow = zodResolver(shareFormWithoutWindowSchema);
/** The window's fields are checked only while hours are limited. */
const resolver: Resolver<ShareFormValues> = (values, context, options) =>
  (values.limitHours ? withWindow : withoutWindow)(values, context, options as never) as ReturnType<
    Resolver<ShareFormValues>
  >;

interface Props {
  appId: string;
  lockId: string;
  open: boolean;
  onCancel: () => void;
  onShared: (email: string) => void;
}

/** Share the lock with an email: role, optional start/end, and optionally days and hours in a time zone. */
export function ShareDialog({ open, onCancel, ...rest }: Props) {
  const titleId = useId();
  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby={titleId} fullWidth maxWidth="sm">
      {open && <ShareForm titleId={titleId} onCancel={onCancel} {...rest} />}
    </Dialog>
  );
}

function ShareForm({
  titleId,
  appId,
  lockId,
  onCancel,
  onShared,
}: Omit<Props, 'open'> & { titleId: string }) {
  const { t, i18n } = useTranslation();
  const add = useAddShare(appId, lockId);
  const form = useForm<ShareFormValues>({ resolver, defaultValues: defaultShareValues(), mode: 'all' });
  const limitHours = useWatch({ control: form.control, name: 'limitHours' });
  const dateSlot = { inputLabel: { shrink: true } };
  // The pickers write dates as the browser does: said under them where the page writes dates otherwise.
  const format = pickerFormat(i18n.language, true);
  const formatHint = format ? t('common.pickerFormat', { format }) : undefined;

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit((values) =>
          add.mutate(toCreateShare(values), {
            onSuccess: () => onShared(values.email.trim()),
            // A refused field shows under it, focused; anything else in the alert below. The form is kept.
            onError: (error) => void showFieldErrors(form, error),
          }),
        )(e);
      }}
    >
      <DialogTitle id={titleId}>{t('shares.addShare')}</DialogTitle>
      <DialogContent>
        <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, gap: 2, pt: 1 }}>
          <FormTextField
            control={form.control}
            name="email"
            type="email"
            label={t('shares.email')}
            helperText={t('shares.emailHelp')}
            required
            autoFocus
            sx={{ gridColumn: '1 / -1' }}
          />
          <FormTextField control={form.control} name="role" label={t('shares.role')} select>
            {LOCK_ROLES.map((role) => (
              <MenuItem key={role} value={role}>
                {t(`shares.roles.${role}`)}
              </MenuItem>
            ))}
          </FormTextField>
          <Box sx={{ display: { xs: 'none', sm: 'block' } }} />
          <FormTextField
            control={form.control}
            name="start"
            type="datetime-local"
            label={t('shares.start')}
            helperText={formatHint}
            slotProps={dateSlot}
          />
          <FormTextField
            control={form.control}
            name="end"
            type="datetime-local"
            label={t('shares.end')}
            helperText={formatHint}
            slotProps={dateSlot}
          />
        </Box>
        <Controller
          control={form.control}
          name="limitHours"
          render={({ field }) => (
            <FormControlLabel
              sx={{ mt: 2 }}
              control={
                <Switch
                  checked={field.value}
                  onChange={(_e, on) => (field.onChange(on), void form.trigger())}
                />
              }
              label={t('shares.limitHours')}
            />
          )}
        />
        {limitHours && <HoursWindow control={form.control} />}
        {add.isError && !hasFieldErrors(add.error) && (
          <Alert severity="error" sx={{ mt: 2 }}>
            {errorMessage(add.error)}
          </Alert>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button type="submit" variant="contained" disabled={!form.formState.isValid || add.isPending}>
          {t('shares.addShare')}
        </Button>
      </DialogActions>
    </form>
  );
}

/** The days, hours and time zone a share is limited to (shown while hours are limited). */
function HoursWindow({ control }: { control: Control<ShareFormValues> }) {
  const { t } = useTranslation();
  const zonesId = useId();
  const zones = useMemo(knownTimeZones, []);
  const dateSlot = { inputLabel: { shrink: true } };
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr 1fr', sm: '1fr 1fr 2fr' }, gap: 2, mt: 1 }}>
      <DaysField control={control} />
      <FormTextField
        control={control}
        name="from"
        type="time"
        label={t('shares.from')}
        slotProps={dateSlot}
      />
      <FormTextField
        control={control}
        name="until"
        type="time"
        label={t('shares.until')}
        slotProps={dateSlot}
      />
      <FormTextField
        control={control}
        name="timezone"
        label={t('shares.timeZone')}
        sx={{ gridColumn: { xs: '1 / -1', sm: 'auto' } }}
        slotProps={{ htmlInput: { list: zonesId, autoComplete: 'off' } }}
      />
      <datalist id={zonesId}>
        {zones.map((zone) => (
          <option key={zone} value={zone} />
        ))}
      </datalist>
    </Box>
  );
}

/** The weekdays a share holds on, one checkbox each; its error under them. */
function DaysField({ control }: { control: Control<ShareFormValues> }) {
  const { t } = useTranslation();
  return (
    <Controller
      control={control}
      name="days"
      render={({ field, fieldState }) => (
        <FormControl
          component="fieldset"
          error={fieldState.error !== undefined}
          sx={{ gridColumn: '1 / -1' }}
        >
          <FormLabel component="legend">{t('shares.days')}</FormLabel>
          <FormGroup row>
            {WEEKDAYS.map((day) => (
              <FormControlLabel
                key={day}
                label={t(`shares.dayNames.${day}`)}
                control={
                  <Checkbox
                    checked={field.value.includes(day)}
                    slotProps={{ input: { 'aria-label': t(`shares.dayLabels.${day}`) } }}
                    onChange={(_e, on) =>
                      field.onChange(
                        on ? [...field.value, day] : field.value.filter((d: Weekday) => d !== day),
                      )
                    }
                  />
                }
              />
            ))}
          </FormGroup>
          {fieldState.error && <FormHelperText>{localText(fieldState.error.message ?? '')}</FormHelperText>}
        </FormControl>
      )}
    />
  );
}
