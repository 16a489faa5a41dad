import type { FastifyInstance } from 'fastify';
import { TEST_EMAIL_SUBJECT_PREFIX, testEmailErrors, type TestEmailBody, type TestEmailResult } from '@latchkey/contract';
import { renderBrandedEmail, type EmailBranding } from '@latchkey/email';
import { AppError } from '../../errors.js';
import { sendApplicationEmail } from '../outbox/outbox.service.js';
import { loadApplication } from './email-preview.service.js';

/** The stored branding with the card's unsaved email preferences on top (absent = as stored, null = cleared). */
export function withUnsavedPreferences(branding: EmailBranding, update: TestEmailBody['emailPreferences']): EmailBranding {
  const prefs = branding.emailPreferences;
  return {
    ...branding,
    emailPreferences: {
      senderName: update.senderName === undefined ? prefs.senderName : update.senderName,
      senderEmail: update.senderEmail === undefined ? prefs.senderEmail : update.senderEmail,
      primaryColour: update.primaryColour ?? prefs.primaryColour,
      secondaryColour: update.secondaryColour ?? prefs.secondaryColour,
      onlySendEssentialEmails: update.onlySendEssentialEmails ?? prefs.onlySendEssentialEmails,
      callToAction: update.callToAction === undefined ? prefs.callToAction : update.callToAction,
    },
  };
}

/**
 * The sample email the card previews, in the card's current (unsaved) branding, to the signed-in
 * owner through the configured mailer; it is kept in the application's sandbox Outbox like every email
 * the platform sends for it. Nothing of the application changes.
 */
export async function sendTestEmail(app: FastifyInstance, applicationId: string, to: string, body: TestEmailBody): Promise<TestEmailResult> {
  if (!to) throw new AppError(422, testEmailErrors.noRecipient);
  const { branding } = await loadApplication(app.db, applicationId);
  const rendered = await renderBrandedEmail({
    branding: withUnsavedPreferences(branding, body.emailPreferences),
    message: { kind: 'sample' },
    language: body.language,
  });
  const subject = `${TEST_EMAIL_SUBJECT_PREFIX} ${rendered.subject}`;
  try {
    await sendApplicationEmail(app, { applicationId, kind: 'branding-test', to, ...rendered, subject });
  } catch (err) {
    app.log.error({ err, applicationId }, 'test email could not be sent');
    throw new AppError(502, testEmailErrors.mailerFailed);
  }
  return { to, driver: app.mailer.driver };
}
