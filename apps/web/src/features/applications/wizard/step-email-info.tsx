import { wizardStepSchemas } from '@latchkey/contract';
import { Box, Checkbox, FormControlLabel, FormHelperText } from '@mui/material';
import { Controller, FormProvider, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { CallToActionFields } from '../components/call-to-action-fields';
import { EmailPreviewFrame } from '../components/email-preview-frame';
import { useStepForm, type StepProps } from './use-step-form';
import { StepLayout } from './step-layout';
import { WizardFooter } from './wizard-footer';

export function StepEmailInfo(props: StepProps<2>) {
  const { applicationId, values, drafts, busy } = props;
  const { t } = useTranslation();
  const { form, back, submit } = useStepForm(2, props);
  // Colours the user already chose on the Branding step (kept by its Back) show here too, once valid.
  const branding = wizardStepSchemas[3].safeParse(drafts[3]).data ?? values[3];
  const [callToAction, senderName, onlySendEssentialEmails] = useWatch({ control: form.control, name: ['callToAction', 'senderName', 'onlySendEssentialEmails'] });
  return (
    <FormProvider {...form}>
      <form noValidate onSubmit={submit}>
        <StepLayout
          fields={
            <>
              <FormTextField
                control={form.control}
                name="senderEmail"
                label={t('wizard.senderEmail')}
                type="email"
                required
                autoFocus
              />
              <FormTextField
                control={form.control}
                name="senderName"
                label={t('wizard.senderName')}
                required
              />
              <Controller
                control={form.control}
                name="onlySendEssentialEmails"
                render={({ field }) => (
                  <Box>
                    <FormControlLabel
                      control={
                        <Checkbox checked={field.value} onChange={(e) => field.onChange(e.target.checked)} />
                      }
                      label={t('wizard.onlySendEssentialEmails')}
                    />
                    <FormHelperText sx={{ mt: -0.5, mb: 1 }}>
                      {t('wizard.onlySendEssentialEmailsHelp')}
                    </FormHelperText>
                  </Box>
                )}
              />
              <CallToActionFields supportContact={values[1].supportContact} />
            </>
          }
          preview={
            applicationId && (
              <EmailPreviewFrame applicationId={applicationId} input={{ ...branding, callToAction, senderName, onlySendEssentialEmails }} />
            )
          }
          footer={<WizardFooter step={2} isValid={form.formState.isValid} busy={busy} onBack={back} />}
        />
      </form>
    </FormProvider>
  );
}
