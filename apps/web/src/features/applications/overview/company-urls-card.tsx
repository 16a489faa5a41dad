import { wizardStepSchemas, type Application } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import type * as z from 'zod/mini';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useOperation } from '../../../components/ui/use-operation';
import { showFieldErrors } from '../../../lib/field-errors';
import { useUpdateApplication } from '../api';
import { pickDirtyEmptyAsNull } from './dirty-fields';
import { EditableCard } from './editable-card';
import { EditFormScope, useEditFormContext } from './edit-form-scope';

type CompanyUrlValues = z.infer<(typeof wizardStepSchemas)[1]>;

export function CompanyUrlsCard({ app }: { app: Application }) {
  const values: CompanyUrlValues = {
    privacyPolicy: app.privacyPolicy ?? '',
    supportContact: app.supportContact ?? '',
    appLink: app.appLink ?? '',
  };
  return (
    <EditFormScope schema={wizardStepSchemas[1]} values={values}>
      <CompanyUrlsCardForm applicationId={app.applicationId} />
    </EditFormScope>
  );
}

function CompanyUrlsCardForm({ applicationId }: { applicationId: string }) {
  const { t } = useTranslation();
  const update = useUpdateApplication(applicationId);
  const op = useOperation();
  const { form, editing, startEdit, cancel, finish, saveEnabled } = useEditFormContext<CompanyUrlValues>();

  const onSubmit = form.handleSubmit(async (values) => {
    const result = await op.run(() => update.mutateAsync(pickDirtyEmptyAsNull(values, form.formState.dirtyFields)), {
      notice: true,
      inPlace: (e) => showFieldErrors(form, e),
    });
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
