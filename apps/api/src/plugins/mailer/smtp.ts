import nodemailer, { type Transporter } from 'nodemailer';
import { assertSingleAddress, oneLine, type MailLogger, type MailMessage, type Mailer, type SentMail } from './mailer.js';

/** SMTP through nodemailer, from SMTP_URL (smtp://user:pass@host:587, smtps://… for implicit TLS). */
export class SmtpMailer implements Mailer {
  readonly driver = 'smtp' as const;
  readonly #transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly logger: MailLogger,
  ) {
    this.#transport = nodemailer.createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<SentMail> {
    const to = assertSingleAddress(message.to);
    const subject = oneLine(message.subject);
    const info = await this.#transport.sendMail({ from: this.from, to, subject, text: message.text, html: message.html });
    const id = String(info.messageId ?? '');
    this.logger.info({ mail: { id, to, subject } }, 'mail sent over SMTP');
    return { id };
  }

  async close(): Promise<void> {
    this.#transport.close();
  }
}
