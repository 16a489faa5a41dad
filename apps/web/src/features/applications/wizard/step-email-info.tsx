import { Box, Checkbox, FormControlLabel, FormHelperText } from '@mui/material';
import { Controller, FormProvider, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { CallToActionFields } from '../components/call-to-action-fields';
import { EmailPreviewFrame } from '../components/email-preview-frame';
import { useStepForm, type StepProps } from './use-step-form';
import { WizardFooter } from './wizard-footer';

export function StepEmailInfo({ applicationId, values, busy, onSubmit, onBack }: StepProps<2>) {
  const { t } = useTranslation();
  const form = useStepForm(2, values[2]);
  const callToAction = useWatch({ control: form.control, name: 'callToAction' });
  return (
    <FormProvider {...form}>
      <form noValidate onSubmit={form.handleSubmit(onSubmit)}>
        <FormTextField control={form.control} name="senderEmail" label={t('wizard.senderEmail')} type="email" required autoFocus />
        <FormTextField control={form.control} name="senderName" label={t('wizard.senderName')} required />
        <Controller
          control={form.control}
          name="onlySendEssentialEmails"
          render={({ field }) => (
            <Box>
              <FormControlLabel
                control={<Checkbox checked={field.value} onChange={(e) => field.onChange(e.target.checked)} />}
                label={t('wizard.onlySendEssentialEmails')}
              />
              <FormHelperText sx={{ mt: -0.5, mb: 1 }}>{t('wizard.onlySendEssentialEmailsHelp')}</FormHelperText>
            </Box>
          )}
        />
        <CallToActionFields />
        <WizardFooter step={2} isValid={form.formState.isValid} busy={busy} onBack={onBack} />
      </form>
      {applicationId && (
        <Box sx={{ mt: 3 }}>
          <EmailPreviewFrame applicationId={applicationId} input={{ ...values[3], callToAction }} />
        </Box>
      )}
    </FormProvider>
  );
}
