import * as z from 'zod/mini';
import { emailPreferencesUpdateSchema } from './applications.js';
import { LANGUAGES } from './constants.js';

/**
 * "Send a test email" on the Email & Branding card. The body is the card's current, unsaved
 * email preferences (validated like a save); the email goes to the signed-in owner only.
 */
export const testEmailBodySchema = z.object({
  emailPreferences: emailPreferencesUpdateSchema,
  language: z.optional(z.enum(LANGUAGES)),
});
export type TestEmailBody = z.infer<typeof testEmailBodySchema>;

export const testEmailResultSchema = z.object({
  /** The owner's address it went to. */
  to: z.string(),
  /** Where it can be seen: the configured mailer, and always the application's sandbox Outbox. */
  driver: z.enum(['smtp', 'outbox']),
});
export type TestEmailResult = z.infer<typeof testEmailResultSchema>;

/** Test emails per signed-in owner and window: enough to try a few colours, not enough to spam oneself. */
export const TEST_EMAIL_LIMIT = { max: 5, windowSeconds: 10 * 60 };

/** The subject's prefix, the same in every language the portal speaks. */
export const TEST_EMAIL_SUBJECT_PREFIX = '[Test]';

export const testEmailErrors = {
  noRecipient: 'Your account has no email address to send the test email to',
  mailerFailed: 'The test email could not be sent. Please try again.',
} as const;
