/** Outgoing mail: SMTP when SMTP_URL is set, otherwise an outbox in the data directory. */
export interface MailMessage {
  to: string;
  subject: string;
  html: string;
  text: string;
}

export interface SentMail {
  id: string;
}

export interface Mailer {
  readonly driver: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<SentMail>;
  close(): Promise<void>;
}

/** The part of a pino logger the mailers use (a Fastify logger fits). */
export interface MailLogger {
  info(obj: object, msg?: string): void;
}

/** Header values must stay on one line: no CR/LF may reach a Subject or To header. */
export function oneLine(value: string, max = 998): string {
  return value.replace(/[\r\n\u2028\u2029]+/g, ' ').trim().slice(0, max);
}

/** One plain address (letters, digits and ._%+- before the @, a domain, a suffix of 2+ letters); lists, display names and header tricks are refused. */
export function assertSingleAddress(to: string): string {
  const address = to.trim();
  if (!/^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(address)) throw new Error('Not a single valid email address');
  return address;
}
