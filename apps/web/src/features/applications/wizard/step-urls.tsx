import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useStepForm, type StepProps } from './use-step-form';
import { WizardFooter } from './wizard-footer';

export function StepUrls(props: StepProps<1>) {
  const { busy } = props;
  const { t } = useTranslation();
  const { form, back, submit } = useStepForm(1, props);
  return (
    <form noValidate onSubmit={submit}>
      <FormTextField control={form.control} name="privacyPolicy" label={t('wizard.privacyPolicy')} type="url" required autoFocus />
      <FormTextField control={form.control} name="supportContact" label={t('wizard.supportContact')} required />
      <FormTextField control={form.control} name="appLink" label={t('wizard.appLink')} type="url" />
      <WizardFooter step={1} isValid={form.formState.isValid} busy={busy} onBack={back} />
    </form>
  );
}
