import type { Config } from '../../config.js';
import type { MailLogger, Mailer } from './mailer.js';
import { OutboxMailer } from './outbox.js';
import { SmtpMailer } from './smtp.js';

export * from './mailer.js';
export { OutboxMailer } from './outbox.js';
export { SmtpMailer } from './smtp.js';

/** SMTP when SMTP_URL is set, otherwise the outbox in DATA_DIR. */
export function createMailer(config: Config, logger: MailLogger): Mailer {
  return config.mail.smtpUrl
    ? new SmtpMailer(config.mail.smtpUrl, config.mail.from, logger)
    : new OutboxMailer(config.dataDir, config.mail.from, logger);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Outgoing mail, created from config in app.ts (SMTP or the outbox). */
    mailer: Mailer;
  }
}
