import { Box } from '@mui/material';
import { FormProvider, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { ColourField } from '../../../components/ui/colour-field';
import { EmailPreviewFrame } from '../components/email-preview-frame';
import { StoredLogoPicker } from '../components/stored-logo-picker';
import { useStepForm, type StepProps } from './use-step-form';
import { StepLayout } from './step-layout';
import { WizardFooter } from './wizard-footer';

export function StepBranding(props: StepProps<3>) {
  const { applicationId, values, busy } = props;
  const { t } = useTranslation();
  const { form, back, submit } = useStepForm(3, props);
  const [logoUrl, primaryColour, secondaryColour] = useWatch({
    control: form.control,
    name: ['logoUrl', 'primaryColour', 'secondaryColour'],
  });
  return (
    <FormProvider {...form}>
      <form noValidate onSubmit={submit}>
        <StepLayout
          fields={
            <>
              {applicationId && (
                <StoredLogoPicker
                  applicationId={applicationId}
                  logoUrl={logoUrl || null}
                  disabled={busy}
                  onSaved={(url) =>
                    form.setValue('logoUrl', url, { shouldDirty: true, shouldValidate: true })
                  }
                />
              )}
              <Box
                sx={{ display: 'grid', gap: { sm: 2 }, gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' } }}
              >
                <ColourField
                  name="primaryColour"
                  label={t('wizard.primaryColour')}
                  pickerLabel={t('wizard.pickPrimaryColour')}
                />
                <ColourField
                  name="secondaryColour"
                  label={t('wizard.secondaryColour')}
                  pickerLabel={t('wizard.pickSecondaryColour')}
                />
              </Box>
            </>
          }
          preview={
            applicationId && (
              // The server renders the stored application; logoUrl changes only once a new logo is stored.
              <EmailPreviewFrame
                applicationId={applicationId}
                input={{ callToAction: values[2].callToAction, primaryColour, secondaryColour }}
                revision={logoUrl}
              />
            )
          }
          footer={<WizardFooter step={3} isValid={form.formState.isValid} busy={busy} onBack={back} />}
        />
      </form>
    </FormProvider>
  );
}
