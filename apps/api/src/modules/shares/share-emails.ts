import type { FastifyInstance } from 'fastify';
import type { Language } from '@latchkey/contract';
import { renderBrandedEmail } from '@latchkey/email';
import { loadApplication } from '../email-preview/email-preview.service.js';
import { sendApplicationEmail } from '../outbox/outbox.service.js';

export interface ShareEmail {
  applicationId: string;
  lockName: string;
  to: string;
  /** A share to someone with no account yet: always sent, with the invitation's expiry. */
  invitation: boolean;
  expiresAt: Date | null;
  recipientName: string | null;
  /** The sharer's language (the portal sends it): the best guess at the recipient's. */
  language?: Language;
}

/**
 * The email of a share, rendered with the application's branding — the key email its branding card
 * previews, now with the real lock. An invitation is essential and always goes out; a notice to someone
 * who already uses the application only when the application sends more than essential emails.
 * A mailer failure does not undo the share (it is committed and logged); it is logged here, and
 * resharing sends the email again.
 */
export async function sendShareEmail(app: FastifyInstance, email: ShareEmail): Promise<void> {
  const { branding } = await loadApplication(app.db, email.applicationId);
  if (!email.invitation && branding.emailPreferences.onlySendEssentialEmails) return;
  const rendered = await renderBrandedEmail({
    branding,
    message: {
      kind: 'keyShare',
      lockName: email.lockName,
      recipientName: email.recipientName,
      acceptUrl: branding.appLink ?? null,
      expiresAt: email.invitation ? email.expiresAt : null,
    },
    language: email.language,
  });
  try {
    await sendApplicationEmail(app, { applicationId: email.applicationId, kind: email.invitation ? 'lock-invitation' : 'lock-share', to: email.to, ...rendered });
  } catch (err) {
    app.log.error({ err, applicationId: email.applicationId }, 'share email could not be sent');
  }
}
