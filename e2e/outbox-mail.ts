import fs from 'node:fs';
import path from 'node:path';
import { expect } from '@playwright/test';

/** The service's outbox (embedded mode: no SMTP_URL), in the data directory playwright.config.ts gives it. */
const outbox = path.resolve(import.meta.dirname, '.tmp', String(process.env.E2E_PORT ?? 3100), 'data', 'outbox');

interface Mail {
  to: string;
  subject: string;
  text: string;
  createdAt: string;
}

/** The newest email to `to` whose text matches `pattern` (waits for it), and the first match. */
export async function mailMatch(to: string, pattern: RegExp, { after = '' }: { after?: string } = {}): Promise<{ mail: Mail; match: RegExpMatchArray }> {
  let found: { mail: Mail; match: RegExpMatchArray } | undefined;
  await expect
    .poll(() => {
      const files = fs.existsSync(outbox) ? fs.readdirSync(outbox).filter((f) => f.endsWith('.json')).sort() : [];
      for (const f of files.reverse()) {
        const mail = JSON.parse(fs.readFileSync(path.join(outbox, f), 'utf8')) as Mail;
        const match = mail.to === to && mail.createdAt > after ? mail.text.match(pattern) : null;
        if (match) return Boolean((found = { mail, match }));
      }
      return false;
    })
    .toBe(true);
  return found!;
}

/** The six-digit code of the newest key-verification email to `to`. */
export async function keyCode(to: string, after = ''): Promise<string> {
  return (await mailMatch(to, /^\s+(\d{6})$/m, { after })).match[1]!;
}
