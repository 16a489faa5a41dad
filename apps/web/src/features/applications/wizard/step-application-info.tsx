import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useStepForm, type StepProps } from './use-step-form';
import { WizardFooter } from './wizard-footer';

export function StepApplicationInfo(props: StepProps<0>) {
  const { busy } = props;
  const { t } = useTranslation();
  const { form, back, submit } = useStepForm(0, props);
  return (
    <form noValidate onSubmit={submit}>
      <FormTextField control={form.control} name="name" label={t('wizard.name')} required autoFocus />
      <FormTextField control={form.control} name="companyName" label={t('wizard.companyName')} required />
      <FormTextField control={form.control} name="mailingAddress" label={t('wizard.mailingAddress')} required minLines={3} />
      <WizardFooter step={0} isValid={form.formState.isValid} busy={busy} onBack={back} />
    </form>
  );
}
