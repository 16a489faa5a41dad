import { wizardStepSchemas, type Application } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useOperation } from '../../../components/ui/use-operation';
import { useUpdateApplication } from '../api';
import { pickDirtyEmptyAsNull } from './dirty-fields';
import { EditableCard } from './editable-card';
import { useEditForm } from './use-edit-form';

export function CompanyUrlsCard({ app }: { app: Application }) {
  const { t } = useTranslation();
  const update = useUpdateApplication(app.applicationId);
  const op = useOperation();
  const { form, editing, startEdit, cancel, finish, saveEnabled } = useEditForm(wizardStepSchemas[1], {
    privacyPolicy: app.privacyPolicy ?? '',
    supportContact: app.supportContact ?? '',
    appLink: app.appLink ?? '',
  });

  const onSubmit = form.handleSubmit(async (values) => {
    const result = await op.run(() => update.mutateAsync(pickDirtyEmptyAsNull(values, form.formState.dirtyFields)));
    if (result.ok) finish();
  });

  return (
    <EditableCard
      title={t('overview.companyUrls')}
      headingId="card-company-urls"
      editing={editing}
      onEdit={startEdit}
      onCancel={cancel}
      onSubmit={onSubmit}
      saveEnabled={saveEnabled}
    >
      <FormTextField control={form.control} name="privacyPolicy" label={t('wizard.privacyPolicy')} type="url" required disabled={!editing} />
      <FormTextField control={form.control} name="supportContact" label={t('wizard.supportContact')} required disabled={!editing} />
      <FormTextField control={form.control} name="appLink" label={t('wizard.appLink')} type="url" disabled={!editing} />
      {op.dialogs}
    </EditableCard>
  );
}
