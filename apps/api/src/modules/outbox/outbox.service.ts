import { and, desc, eq, or, type SQL } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { lockErrors, OUTBOX_PAGE_SIZE, type OutboxEmailKind, type SentEmail, isUuid } from '@latchkey/contract';
import type { AccountEmail, RenderedEmail } from '@latchkey/email';
import type { Db } from '../../db/client.js';
import { sentEmails, users } from '../../db/schema.js';
import { notFound } from '../../errors.js';

export type SentEmailKind = OutboxEmailKind;

/**
 * Whether an email that carries a secret (a sign-in link, a one-time code) is kept in the Outbox too: only
 * on a service without SMTP, where it went to a file in the data directory and no inbox can show it.
 * With SMTP the inbox is the proof the code or link asks for, and a copy here would let whoever holds a
 * session read it instead.
 */
export const keepsSecretEmails = (app: FastifyInstance) => app.mailer.driver === 'outbox';

/**
 * Sends an application's email through the configured mailer (SMTP or the file outbox) and keeps it,
 * as rendered, in the application's Outbox, so a developer sees their branding in use without a real
 * inbox. Kept only once the mailer took it: the Outbox lists what was really sent. `keep: false`: sent only.
 */
export async function sendApplicationEmail(
  app: FastifyInstance,
  email: { applicationId: string; kind: SentEmailKind; to: string } & RenderedEmail,
  { keep = true }: { keep?: boolean } = {},
): Promise<void> {
  await app.mailer.send({ to: email.to, subject: email.subject, html: email.html, text: email.text });
  if (keep) await app.db.insert(sentEmails).values(email);
}

/** How the Outbox names each of a portal account's own emails; a password reset is never kept. */
const ACCOUNT_KINDS: Record<Exclude<AccountEmail['kind'], 'passwordReset'>, SentEmailKind> = {
  verifyEmail: 'account-verify-email',
  keyCode: 'account-key-code',
  passkeyCode: 'account-passkey-code',
  passkeyAdded: 'account-passkey-added',
};

/**
 * A portal account's own email (its address to verify, a key's or a passkey's code): sent, and on a
 * service without SMTP kept for that account alone, so its owner finds the code in the Outbox instead of
 * in the service's files. A password reset link is never kept: it is asked for signed out, and a session
 * must not be able to turn itself into a new password.
 */
export async function sendAccountMail(app: FastifyInstance, to: string, kind: AccountEmail['kind'], mail: RenderedEmail): Promise<void> {
  await app.mailer.send({ to, ...mail });
  if (kind === 'passwordReset' || !keepsSecretEmails(app)) return;
  const [user] = await app.db.select({ id: users.id }).from(users).where(eq(users.email, to.toLowerCase())).limit(1);
  if (user) await app.db.insert(sentEmails).values({ userId: user.id, kind: ACCOUNT_KINDS[kind], to, ...mail });
}

/** What a reader of an application's Outbox may see: the application's emails, and their own account's. */
const readable = (applicationId: string, userId: string): SQL => or(eq(sentEmails.applicationId, applicationId), eq(sentEmails.userId, userId))!;

/** The newest emails of an application and of the reader's own account, without their HTML (fetched one at a time). */
export async function listOutbox(db: Db, applicationId: string, userId: string): Promise<SentEmail[]> {
  const rows = await db
    .select({ id: sentEmails.id, kind: sentEmails.kind, to: sentEmails.to, subject: sentEmails.subject, text: sentEmails.text, createdAt: sentEmails.createdAt })
    .from(sentEmails)
    .where(readable(applicationId, userId))
    .orderBy(desc(sentEmails.createdAt), desc(sentEmails.id))
    .limit(OUTBOX_PAGE_SIZE);
  return rows.map((r) => ({ ...r, createdAt: Math.floor(r.createdAt.getTime() / 1000) }));
}

/** One email's HTML as it was sent; another application's or another account's email is as missing as an unknown one. */
export async function getOutboxHtml(db: Db, applicationId: string, userId: string, emailId: string): Promise<string> {
  if (!isUuid(emailId)) throw notFound(lockErrors.outboxEmailNotFound);
  const [row] = await db
    .select({ html: sentEmails.html })
    .from(sentEmails)
    .where(and(eq(sentEmails.id, emailId), readable(applicationId, userId)))
    .limit(1);
  if (!row) throw notFound(lockErrors.outboxEmailNotFound);
  return row.html;
}
