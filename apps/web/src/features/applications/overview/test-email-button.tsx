import { faPaperPlane } from '@fortawesome/free-solid-svg-icons';
import { LANGUAGES, TEST_EMAIL_LIMIT, type EmailPreferencesUpdate, type Language } from '@latchkey/contract';
import { Box, Button, FormHelperText } from '@mui/material';
import { useId } from 'react';
import { useFormContext, type FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { useOperation } from '../../../components/ui/use-operation';
import { showFieldErrors } from '../../../lib/field-errors';
import { ApiError, errorMessage } from '../../../lib/http';
import { useSession } from '../../../lib/use-session';
import { sendTestEmail } from '../test-email-api';

interface BrandingValues extends FieldValues {
  senderEmail: string;
  senderName: string;
  onlySendEssentialEmails: boolean;
  callToAction: EmailPreferencesUpdate['callToAction'];
  primaryColour: string;
  secondaryColour: string;
}

/**
 * "Send a test email": what the card shows right now — saved or not — goes to the signed-in
 * owner as the sample email, through the platform's mailer, and into the application's Outbox. A value the
 * server refuses shows under its field, as a save's would; nothing of the application changes.
 */
export function TestEmailButton({ applicationId }: { applicationId: string }) {
  const { t, i18n } = useTranslation();
  const { email } = useSession();
  const form = useFormContext<BrandingValues>();
  const op = useOperation();
  const helpId = useId();

  const send = async () => {
    const v = form.getValues();
    const emailPreferences: EmailPreferencesUpdate = {
      senderEmail: v.senderEmail.trim() || null,
      senderName: v.senderName.trim() || null,
      onlySendEssentialEmails: v.onlySendEssentialEmails,
      callToAction: v.callToAction ?? null,
      primaryColour: v.primaryColour,
      secondaryColour: v.secondaryColour,
    };
    const language = LANGUAGES.includes(i18n.language as Language) ? (i18n.language as Language) : undefined;
    await op.run(() => sendTestEmail(applicationId, { emailPreferences, language }), {
      notice: t('testEmail.sentOutbox', { to: email ?? '' }),
      inPlace: (e) => showFieldErrors(form as never, e, 'emailPreferences.'),
      // The limit in words, and when the next one may go, rather than a bare "too many attempts".
      failureMessage: (e) =>
        e instanceof ApiError && e.status === 429
          ? t('testEmail.limited', {
              max: TEST_EMAIL_LIMIT.max,
              window: TEST_EMAIL_LIMIT.windowSeconds / 60,
              minutes: Math.max(1, Math.ceil((e.retryAfterSeconds ?? TEST_EMAIL_LIMIT.windowSeconds) / 60)),
            })
          : errorMessage(e),
    });
  };

  return (
    <Box sx={{ mt: 2 }}>
      <Button variant="outlined" onClick={() => void send()} startIcon={<Icon icon={faPaperPlane} />} aria-describedby={helpId}>
        {t('testEmail.send')}
      </Button>
      <FormHelperText id={helpId}>{t('testEmail.help', { email: email ?? '' })}</FormHelperText>
      {op.dialogs}
    </Box>
  );
}
