import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { assertSingleAddress, oneLine, type MailLogger, type MailMessage, type Mailer, type SentMail } from './mailer.js';

/**
 * Messages written in the same millisecond keep the order they were sent in: the file name carries this
 * process's running count after the time, before the random id.
 */
let written = 0;

export interface OutboxMessage extends MailMessage {
  id: string;
  from: string;
  createdAt: string;
}

/**
 * The default mailer: each message becomes one JSON file in `${dataDir}/outbox/` (written atomically)
 * and one log line, so invitations work on a fresh machine with nothing configured.
 */
export class OutboxMailer implements Mailer {
  readonly driver = 'outbox' as const;
  readonly dir: string;

  constructor(
    dataDir: string,
    private readonly from: string,
    private readonly logger: MailLogger,
  ) {
    this.dir = path.resolve(dataDir, 'outbox');
  }

  async send(message: MailMessage): Promise<SentMail> {
    const id = randomUUID();
    const createdAt = new Date().toISOString();
    const record: OutboxMessage = {
      id,
      from: this.from,
      to: assertSingleAddress(message.to),
      subject: oneLine(message.subject),
      text: message.text,
      html: message.html,
      createdAt,
    };
    await fs.mkdir(this.dir, { recursive: true });
    // Sortable by time, then by the order of sending; unique by id.
    const sequence = String((written += 1)).padStart(12, '0');
    const file = path.join(this.dir, `${createdAt.replace(/[:.]/g, '-')}-${sequence}-${id}.json`);
    const temp = `${file}.tmp`;
    await fs.writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    await fs.rename(temp, file);
    this.logger.info({ mail: { id, to: record.to, subject: record.subject, file } }, 'mail written to outbox');
    return { id };
  }

  /** Every message in the outbox, oldest first (for tests and local development). */
  async list(): Promise<OutboxMessage[]> {
    let names: string[];
    try {
      names = (await fs.readdir(this.dir)).filter((n) => n.endsWith('.json')).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return Promise.all(names.map(async (n) => JSON.parse(await fs.readFile(path.join(this.dir, n), 'utf8')) as OutboxMessage));
  }

  async close(): Promise<void> {}
}
