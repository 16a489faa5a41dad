import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Language } from '@latchkey/contract';
import { renderBrandedEmail } from '@latchkey/email';
import type { Db } from '../../db/client.js';
import { applications, applicationUsers } from '../../db/schema.js';
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

/**
 * Whether sharing a lock with this person makes the platform send an email (as `sendShareEmail` decides):
 * an invitation to an address no user of the application has yet, or to a pending user; a key email to an
 * active user with an address, unless the application sends only essential emails. Asked before the share
 * is made, so the email is charged first and a refused charge changes nothing.
 */
export async function shareSendsEmail(db: Db, applicationId: string, to: { userId?: string | null; email?: string | null }): Promise<boolean> {
  const inApp = eq(applicationUsers.applicationId, applicationId);
  const fields = { email: applicationUsers.email, status: applicationUsers.status };
  let recipient: { email: string | null; status: string } | undefined;
  if (to.userId) {
    [recipient] = await db.select(fields).from(applicationUsers).where(and(inApp, eq(applicationUsers.id, to.userId))).limit(1);
    if (!recipient?.email) return false;
  } else if (to.email) {
    const withEmail = and(inApp, sql`lower(${applicationUsers.email}) = ${to.email.toLowerCase()}`);
    [recipient] = await db.select(fields).from(applicationUsers).where(and(withEmail, isNotNull(applicationUsers.sub))).limit(1);
    if (!recipient) return true;
  } else {
    return false;
  }
  if (recipient.status === 'pending') return true;
  const [row] = await db.select({ essentialOnly: applications.onlySendEssentialEmails }).from(applications).where(eq(applications.id, applicationId)).limit(1);
  return row !== undefined && !row.essentialOnly;
}
