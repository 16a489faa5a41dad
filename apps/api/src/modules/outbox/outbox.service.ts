import { and, desc, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { lockErrors, OUTBOX_PAGE_SIZE, type SentEmail, isUuid } from '@latchkey/contract';
import type { RenderedEmail } from '@latchkey/email';
import type { Db } from '../../db/client.js';
import { sentEmails } from '../../db/schema.js';
import { notFound } from '../../errors.js';


export type SentEmailKind = 'lock-invitation' | 'lock-share' | 'branding-test';

/**
 * Sends an application's email through the configured mailer (SMTP or the file outbox) and keeps it,
 * as rendered, in the application's sandbox Outbox, so a developer sees their branding in use without a
 * real inbox. Kept only once the mailer took it: the Outbox lists what was really sent.
 */
export async function sendApplicationEmail(
  app: FastifyInstance,
  email: { applicationId: string; kind: SentEmailKind; to: string } & RenderedEmail,
): Promise<void> {
  await app.mailer.send({ to: email.to, subject: email.subject, html: email.html, text: email.text });
  await app.db.insert(sentEmails).values(email);
}

/** The newest emails of an application, without their HTML (that is fetched one at a time). */
export async function listOutbox(db: Db, applicationId: string): Promise<SentEmail[]> {
  const rows = await db
    .select({ id: sentEmails.id, kind: sentEmails.kind, to: sentEmails.to, subject: sentEmails.subject, text: sentEmails.text, createdAt: sentEmails.createdAt })
    .from(sentEmails)
    .where(eq(sentEmails.applicationId, applicationId))
    .orderBy(desc(sentEmails.createdAt), desc(sentEmails.id))
    .limit(OUTBOX_PAGE_SIZE);
  return rows.map((r) => ({ ...r, createdAt: Math.floor(r.createdAt.getTime() / 1000) }));
}

/** One email's HTML as it was sent; another application's email is as missing as an unknown one. */
export async function getOutboxHtml(db: Db, applicationId: string, emailId: string): Promise<string> {
  if (!isUuid(emailId)) throw notFound(lockErrors.outboxEmailNotFound);
  const [row] = await db
    .select({ html: sentEmails.html })
    .from(sentEmails)
    .where(and(eq(sentEmails.id, emailId), eq(sentEmails.applicationId, applicationId)))
    .limit(1);
  if (!row) throw notFound(lockErrors.outboxEmailNotFound);
  return row.html;
}
