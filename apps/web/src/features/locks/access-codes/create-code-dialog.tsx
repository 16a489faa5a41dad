import type { AccessCode } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControl,
  FormControlLabel,
  FormHelperText,
  FormLabel,
  MenuItem,
  Radio,
  RadioGroup,
  Typography,
} from '@mui/material';
import { useId, useState } from 'react';
import { Controller, useForm, useWatch, type Control, type UseFormReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { CopyValue } from '../../../components/ui/copy-value';
import { FormTextField } from '../../../components/ui/form-text-field';
import { pickerFormat } from '../../../lib/dates';
import { ApiError, errorMessage } from '../../../lib/http';
import { localText } from '../../../lib/server-text';
import { useCreateAccessCode } from './api';
import { describeWindow } from './format';
import {
  accessCodeResolver,
  defaultAccessCodeValues,
  formField,
  hourChoices,
  suggestedOfflineWindow,
  toCreateAccessCode,
  type AccessCodeFormValues,
} from './form';

interface Props {
  appId: string;
  lockId: string;
  open: boolean;
  onClose: () => void;
}

/** Create a code: the form, then the code made, large, to copy. */
export function CreateCodeDialog({ open, onClose, ...rest }: Props) {
  const titleId = useId();
  const [created, setCreated] = useState<AccessCode | null>(null);
  const close = () => (setCreated(null), onClose());
  return (
    <Dialog open={open} onClose={close} aria-labelledby={titleId} fullWidth maxWidth="sm">
      {open && !created && <CreateForm titleId={titleId} onCancel={close} onCreated={setCreated} {...rest} />}
      {open && created && <CreatedCode titleId={titleId} code={created} onDone={close} />}
    </Dialog>
  );
}

/**
 * A refusal naming fields goes under them (the form is kept); a clash (the code is taken) goes under the
 * code; anything else in an alert above the buttons. Returns whether a field took a message.
 */
function showRefusal(form: UseFormReturn<AccessCodeFormValues>, error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  const fields = error.fieldErrors
    .map((e) => ({ field: formField(e.path), message: localText(e.message) }))
    .filter((e): e is { field: keyof AccessCodeFormValues; message: string } => e.field !== null);
  if (error.status === 409 && fields.length === 0 && form.getValues('code').trim())
    fields.push({ field: 'code', message: localText(error.message) });
  fields.forEach((e, i) => form.setError(e.field, { type: 'server', message: e.message }, { shouldFocus: i === 0 }));
  return fields.length > 0;
}

function CreateForm({
  titleId,
  appId,
  lockId,
  onCancel,
  onCreated,
}: Omit<Props, 'open' | 'onClose'> & { titleId: string; onCancel: () => void; onCreated: (code: AccessCode) => void }) {
  const { t } = useTranslation();
  const create = useCreateAccessCode(appId, lockId);
  const form = useForm<AccessCodeFormValues>({
    resolver: accessCodeResolver,
    defaultValues: defaultAccessCodeValues(),
    mode: 'all',
  });
  const kind = useWatch({ control: form.control, name: 'kind' });
  const [inPlace, setInPlace] = useState(false);

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit((values) =>
          create.mutate(toCreateAccessCode(values), {
            onSuccess: onCreated,
            onError: (error) => setInPlace(showRefusal(form, error)),
          }),
        )(e);
      }}
    >
      <DialogTitle id={titleId}>{t('accessCodes.dialog.title')}</DialogTitle>
      <DialogContent>
        <Box sx={{ display: 'grid', gap: 2, pt: 1 }}>
          <FormTextField
            control={form.control}
            name="name"
            label={t('accessCodes.dialog.name')}
            helperText={t('accessCodes.dialog.nameHelp')}
            required
            autoFocus
          />
          <Controller
            control={form.control}
            name="kind"
            render={({ field }) => (
              <FormControl component="fieldset">
                <FormLabel component="legend">{t('accessCodes.dialog.kind')}</FormLabel>
                <RadioGroup
                  value={field.value}
                  onChange={(_e, value) => {
                    field.onChange(value);
                    // An offline code needs a window: one is offered, from the next whole hour for a day.
                    if (value === 'offline' && !form.getValues('startDate') && !form.getValues('endDate'))
                      for (const [name, v] of Object.entries(suggestedOfflineWindow()))
                        form.setValue(name as keyof AccessCodeFormValues, v);
                    if (form.formState.isSubmitted) void form.trigger();
                  }}
                >
                  <FormControlLabel value="online" control={<Radio />} label={t('accessCodes.kinds.online')} />
                  <FormHelperText sx={{ mt: -0.5, mb: 1, ml: 4 }}>{t('accessCodes.dialog.onlineHelp')}</FormHelperText>
                  <FormControlLabel value="offline" control={<Radio />} label={t('accessCodes.kinds.offline')} />
                  <FormHelperText sx={{ mt: -0.5, ml: 4 }}>{t('accessCodes.offlineText')}</FormHelperText>
                </RadioGroup>
              </FormControl>
            )}
          />
          {kind === 'online' && (
            <FormTextField
              control={form.control}
              name="code"
              label={t('accessCodes.dialog.code')}
              helperText={t('accessCodes.dialog.codeHelp')}
              slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'off' } }}
            />
          )}
          <WindowFields control={form.control} kind={kind} />
        </Box>
        {create.isError && !inPlace && (
          <Alert severity="error" sx={{ mt: 2 }}>
            {errorMessage(create.error)}
          </Alert>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button type="submit" variant="contained" disabled={create.isPending}>
          {t('accessCodes.create')}
        </Button>
      </DialogActions>
    </form>
  );
}

/** Start and end: a day and one of its whole hours each; required for an offline code. */
function WindowFields({ control, kind }: { control: Control<AccessCodeFormValues>; kind: AccessCodeFormValues['kind'] }) {
  const { t, i18n } = useTranslation();
  const [startDate, endDate] = useWatch({ control, name: ['startDate', 'endDate'] });
  const format = pickerFormat(i18n.language);
  const dateHelp = format ? t('common.pickerFormat', { format }) : undefined;
  const slot = { inputLabel: { shrink: true } };
  const hours = (day: string, name: 'startTime' | 'endTime', label: string) => (
    <FormTextField control={control} name={name} label={label} select slotProps={slot}>
      {kind === 'online' && <MenuItem value="">{t('accessCodes.dialog.noHour')}</MenuItem>}
      {hourChoices(day).map((h) => (
        <MenuItem key={h} value={h}>
          {h}
        </MenuItem>
      ))}
    </FormTextField>
  );
  return (
    <Box component="fieldset" sx={{ border: 0, p: 0, m: 0, minWidth: 0 }}>
      <Typography component="legend" variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {kind === 'offline' ? t('accessCodes.dialog.windowOffline') : t('accessCodes.dialog.windowOnline')}
      </Typography>
      <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '3fr 2fr' }, gap: 2 }}>
        <FormTextField control={control} name="startDate" type="date" label={t('accessCodes.dialog.startDate')} helperText={dateHelp} slotProps={slot} />
        {hours(startDate, 'startTime', t('accessCodes.dialog.startTime'))}
        <FormTextField control={control} name="endDate" type="date" label={t('accessCodes.dialog.endDate')} helperText={dateHelp} slotProps={slot} />
        {hours(endDate, 'endTime', t('accessCodes.dialog.endTime'))}
      </Box>
    </Box>
  );
}

/** The code just made, large and copyable, with when it holds. */
function CreatedCode({ titleId, code, onDone }: { titleId: string; code: AccessCode; onDone: () => void }) {
  const { t, i18n } = useTranslation();
  return (
    <>
      <DialogTitle id={titleId}>{t('accessCodes.created.title')}</DialogTitle>
      <DialogContent>
        <Typography>{t('accessCodes.created.text', { name: code.name })}</Typography>
        <Box
          role="group"
          aria-label={t('accessCodes.codeOf', { name: code.name })}
          sx={{ my: 2, fontSize: { xs: '1.75rem', sm: '2.25rem' }, fontWeight: 600, letterSpacing: '0.08em', '& code': { fontFamily: 'monospace' } }}
        >
          <CopyValue value={code.code} name={t('accessCodes.codeOf', { name: code.name })} />
        </Box>
        <Typography variant="body2" color="text.secondary">
          {t(`accessCodes.kinds.${code.kind}`)} · {describeWindow(code, t, i18n.language)}
        </Typography>
        {code.kind === 'offline' && (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            {t('accessCodes.offlineText')}
          </Typography>
        )}
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={onDone}>
          {t('common.done')}
        </Button>
      </DialogActions>
    </>
  );
}
