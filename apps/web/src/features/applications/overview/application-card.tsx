import { wizardStepSchemas, type Application } from '@latchkey/contract';
import { TextField } from '@mui/material';
import { useTranslation } from 'react-i18next';
import type * as z from 'zod/mini';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useOperation } from '../../../components/ui/use-operation';
import { showFieldErrors } from '../../../lib/field-errors';
import { useUpdateApplication } from '../api';
import { pickDirty } from './dirty-fields';
import { EditableCard } from './editable-card';
import { EditFormScope, useEditFormContext } from './edit-form-scope';
import { OwnersSection } from './owners-section';

type ApplicationValues = z.infer<(typeof wizardStepSchemas)[0]>;

/** Application card: id (read-only), name, company, address; owners below share its edit mode. */
export function ApplicationCard({ app }: { app: Application }) {
  const values: ApplicationValues = { name: app.name, companyName: app.companyName, mailingAddress: app.mailingAddress };
  return (
    <EditFormScope schema={wizardStepSchemas[0]} values={values}>
      <ApplicationCardForm app={app} />
    </EditFormScope>
  );
}

function ApplicationCardForm({ app }: { app: Application }) {
  const { t } = useTranslation();
  const update = useUpdateApplication(app.applicationId);
  const op = useOperation();
  const { form, editing, startEdit, cancel, finish, saveEnabled } = useEditFormContext<ApplicationValues>();

  const onSubmit = form.handleSubmit(async (values) => {
    const result = await op.run(() => update.mutateAsync(pickDirty(values, form.formState.dirtyFields)), {
      notice: true,
      inPlace: (e) => showFieldErrors(form, e),
    });
    if (result.ok) finish();
  });

  return (
    <EditableCard
      title={t('overview.application')}
      headingId="card-application"
      editing={editing}
      onEdit={startEdit}
      onCancel={cancel}
      onSubmit={onSubmit}
      saveEnabled={saveEnabled}
      after={<OwnersSection applicationId={app.applicationId} editing={editing} />}
    >
      <TextField label={t('overview.applicationId')} value={app.applicationId} slotProps={{ htmlInput: { readOnly: true } }} />
      <FormTextField control={form.control} name="name" label={t('wizard.name')} required disabled={!editing} />
      <FormTextField control={form.control} name="companyName" label={t('wizard.companyName')} required disabled={!editing} />
      <FormTextField
        control={form.control}
        name="mailingAddress"
        label={t('wizard.mailingAddress')}
        required
        minLines={2}
        disabled={!editing}
      />
      {op.dialogs}
    </EditableCard>
  );
}
