import { wizardStepSchemas, type Application } from '@latchkey/contract';
import { Box, Checkbox, FormControlLabel, FormHelperText, Typography } from '@mui/material';
import { useMemo } from 'react';
import { Controller, FormProvider, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import * as z from 'zod/mini';
import { ColourField } from '../../../components/ui/colour-field';
import { FormTextField } from '../../../components/ui/form-text-field';
import { useOperation } from '../../../components/ui/use-operation';
import { showFieldErrors } from '../../../lib/field-errors';
import { useUpdateApplication } from '../api';
import { CallToActionFields } from '../components/call-to-action-fields';
import { EmailPreviewFrame } from '../components/email-preview-frame';
import { StoredLogoPicker } from '../components/stored-logo-picker';
import { EditableCard } from './editable-card';
import { TestEmailButton } from './test-email-button';
import { EditFormScope, useEditFormContext } from './edit-form-scope';

/** Sender details, call to action and colours: the whole emailPreferences object, as one form. */
export const emailBrandingFormSchema = z.extend(
  wizardStepSchemas[2],
  z.pick(wizardStepSchemas[3], { primaryColour: true, secondaryColour: true }).shape,
);

type EmailBrandingValues = z.infer<typeof emailBrandingFormSchema>;

export function EmailBrandingCard({ app }: { app: Application }) {
  const prefs = app.emailPreferences;
  const values: EmailBrandingValues = {
    senderEmail: prefs.senderEmail ?? '',
    senderName: prefs.senderName ?? '',
    onlySendEssentialEmails: prefs.onlySendEssentialEmails,
    callToAction: prefs.callToAction,
    primaryColour: prefs.primaryColour,
    secondaryColour: prefs.secondaryColour,
  };
  return (
    <EditFormScope schema={emailBrandingFormSchema} values={values}>
      <EmailBrandingCardForm app={app} />
    </EditFormScope>
  );
}

function EmailBrandingCardForm({ app }: { app: Application }) {
  const { t } = useTranslation();
  const update = useUpdateApplication(app.applicationId);
  const op = useOperation();
  // Every stored field can show in the email; the query hands back the same object while nothing changed.
  const revision = useMemo(() => JSON.stringify(app), [app]);
  const { form, editing, startEdit, cancel, finish, saveEnabled } = useEditFormContext<EmailBrandingValues>();
  // Every field the sample shows, as typed (the sender name too).
  const [callToAction, primaryColour, secondaryColour, senderName, onlySendEssentialEmails] = useWatch({
    control: form.control,
    name: ['callToAction', 'primaryColour', 'secondaryColour', 'senderName', 'onlySendEssentialEmails'],
  });

  // The Email save sends the whole emailPreferences object, then says so.
  const onSubmit = form.handleSubmit(async (values) => {
    const result = await op.run(() => update.mutateAsync({ emailPreferences: values }), {
      notice: true,
      inPlace: (e) => showFieldErrors(form, e, 'emailPreferences.'),
    });
    if (result.ok) finish();
  });

  const after = (
    <>
      <Typography variant="h3" sx={{ mb: 1 }}>
        {t('overview.logo')}
      </Typography>
      <StoredLogoPicker applicationId={app.applicationId} logoUrl={app.logoUrl} />
    </>
  );
  // Beside the colours on a wide screen, so a change shows where the eye already is.
  const aside = (
    <>
      <Typography variant="h3" sx={{ mb: 1 }}>
        {t('wizard.preview')}
      </Typography>
      <EmailPreviewFrame applicationId={app.applicationId} input={{ callToAction, primaryColour, secondaryColour, senderName, onlySendEssentialEmails }} revision={revision} />
      <TestEmailButton applicationId={app.applicationId} />
    </>
  );

  return (
    <FormProvider {...form}>
      <EditableCard
        title={t('overview.emailBranding')}
        headingId="card-email-branding"
        editing={editing}
        onEdit={startEdit}
        onCancel={cancel}
        onSubmit={onSubmit}
        saveEnabled={saveEnabled}
        after={after}
        aside={aside}
      >
        <Typography variant="h3">{t('overview.senderDetails')}</Typography>
        <FormTextField control={form.control} name="senderEmail" label={t('wizard.senderEmail')} type="email" required disabled={!editing} />
        <FormTextField control={form.control} name="senderName" label={t('wizard.senderName')} required disabled={!editing} />
        <Controller
          control={form.control}
          name="onlySendEssentialEmails"
          render={({ field }) => (
            <Box>
              <FormControlLabel
                control={<Checkbox checked={field.value} onChange={(e) => field.onChange(e.target.checked)} disabled={!editing} />}
                label={t('wizard.onlySendEssentialEmails')}
              />
              <FormHelperText sx={{ mt: -0.5 }}>{t('wizard.onlySendEssentialEmailsHelp')}</FormHelperText>
            </Box>
          )}
        />
        <Typography variant="h3" sx={{ mt: 2 }}>
          {t('overview.callToActionHeading')}
        </Typography>
        <CallToActionFields disabled={!editing} supportContact={app.supportContact} />
        <Typography variant="h3" sx={{ mt: 2 }}>
          {t('overview.colours')}
        </Typography>
        <Box sx={{ display: 'grid', gap: { sm: 2 }, gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' } }}>
          <ColourField name="primaryColour" label={t('wizard.primaryColour')} pickerLabel={t('wizard.pickPrimaryColour')} disabled={!editing} />
          <ColourField name="secondaryColour" label={t('wizard.secondaryColour')} pickerLabel={t('wizard.pickSecondaryColour')} disabled={!editing} />
        </Box>
        {op.dialogs}
      </EditableCard>
    </FormProvider>
  );
}
