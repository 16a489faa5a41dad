import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderBrandedEmail } from '@latchkey/email';
import { loadConfig } from '../../config.js';
import { createMailer, OutboxMailer, SmtpMailer, type MailLogger } from './index.js';

function recordingLogger() {
  const lines: { obj: object; msg?: string }[] = [];
  const logger: MailLogger = { info: (obj, msg) => lines.push({ obj, msg }) };
  return { logger, lines };
}
const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-mail-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const message = { to: 'new.owner@example.com', subject: 'You are invited', html: '<p>Hello <b>there</b></p>', text: 'Hello there\nCode: K7Q2-9XZP' };

describe('outbox mailer', () => {
  it('writes each message as JSON and logs one line', async () => {
    const { logger, lines } = recordingLogger();
    const mailer = new OutboxMailer(tempDir(), 'Latchkey <no-reply@latchkey.local>', logger);
    const first = await mailer.send(message);
    await mailer.send({ ...message, to: 'second@example.com' });
    const files = fs.readdirSync(mailer.dir);
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.endsWith('.json'))).toBe(true);
    const stored = await mailer.list();
    expect(stored[0]).toMatchObject({ ...message, id: first.id, from: 'Latchkey <no-reply@latchkey.local>' });
    expect(stored[1]!.to).toBe('second@example.com');
    expect(lines).toHaveLength(2);
    expect(lines[0]!.msg).toBe('mail written to outbox');
    expect(lines[0]!.obj).toMatchObject({ mail: { id: first.id, to: message.to, subject: message.subject } });
    // The summary never carries the body (it may hold a one-time code).
    expect(JSON.stringify(lines)).not.toContain('K7Q2-9XZP');
  });

  it('keeps the subject on one line and refuses a header-injecting recipient', async () => {
    const mailer = new OutboxMailer(tempDir(), 'x@example.com', recordingLogger().logger);
    await mailer.send({ ...message, subject: 'Hi\r\nBcc: victim@example.com' });
    expect((await mailer.list())[0]!.subject).toBe('Hi Bcc: victim@example.com');
    for (const to of ['a@example.com\r\nBcc: b@example.com', 'a@example.com, b@example.com', 'Eve <a@example.com>', '']) {
      await expect(mailer.send({ ...message, to })).rejects.toThrow();
    }
    expect(await mailer.list()).toHaveLength(1);
  });

  it('lists messages written in the same millisecond in the order they were sent', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date('2026-11-29T03:00:00.000Z'));
      const mailer = new OutboxMailer(tempDir(), 'x@example.com', recordingLogger().logger);
      const recipients = Array.from({ length: 20 }, (_, i) => `r${i}@example.com`);
      for (const to of recipients) await mailer.send({ ...message, to });
      expect((await mailer.list()).map((m) => m.to)).toEqual(recipients);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lists nothing before the first message', async () => {
    expect(await new OutboxMailer(tempDir(), 'x@example.com', recordingLogger().logger).list()).toEqual([]);
  });
});

describe('SMTP mailer', () => {
  const received: { from: string; to: string[]; raw: string; user?: string }[] = [];
  let server: SMTPServer;
  let port: number;

  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 's3cret') return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            user: session.user as string | undefined,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers subject, text and HTML to the SMTP server, with credentials from the URL', async () => {
    const { logger, lines } = recordingLogger();
    const mailer = new SmtpMailer(`smtp://mailer:s3cret@127.0.0.1:${port}`, 'Latchkey <no-reply@latchkey.local>', logger);
    const email = await renderBrandedEmail({
      branding: { name: 'Acme', logoUrl: null, companyName: 'Acme Ltd', mailingAddress: '1 Road', privacyPolicy: null, supportContact: null, emailPreferences: { primaryColour: '#112233', secondaryColour: '#445566', onlySendEssentialEmails: true, callToAction: null } },
      message: { kind: 'invitation', inviteUrl: 'https://portal.example/login', code: 'K7Q2-9XZP' },
    });
    const sent = await mailer.send({ to: 'new.owner@example.com', ...email });
    await mailer.close();
    const mail = received.at(-1)!;
    expect(mail.user).toBe('mailer');
    expect(mail.from).toBe('no-reply@latchkey.local');
    expect(mail.to).toEqual(['new.owner@example.com']);
    expect(mail.raw).toMatch(/^Subject: You're invited to Acme\r?$/m);
    expect(mail.raw).toContain('Content-Type: text/plain');
    expect(mail.raw).toContain('Content-Type: text/html');
    expect(mail.raw).toContain('K7Q2-9XZP');
    expect(mail.raw).toContain(`Message-ID: ${sent.id}`);
    expect(lines[0]).toMatchObject({ msg: 'mail sent over SMTP', obj: { mail: { to: 'new.owner@example.com' } } });
  });

  it('fails loudly on wrong credentials', async () => {
    const mailer = new SmtpMailer(`smtp://mailer:wrong@127.0.0.1:${port}`, 'x@example.com', recordingLogger().logger);
    await expect(mailer.send(message)).rejects.toThrow();
    await mailer.close();
  });

  it('sends a header-injecting subject as one line', async () => {
    const mailer = new SmtpMailer(`smtp://127.0.0.1:${port}`, 'x@example.com', recordingLogger().logger);
    await mailer.send({ ...message, subject: 'Hi\r\nBcc: victim@example.com' });
    await mailer.close();
    const mail = received.at(-1)!;
    expect(mail.to).toEqual(['new.owner@example.com']);
    expect(mail.raw).not.toMatch(/^Bcc:/m);
  });
});

describe('createMailer', () => {
  it('picks SMTP when SMTP_URL is set, the outbox otherwise', () => {
    const logger = recordingLogger().logger;
    const dataDir = tempDir();
    expect(createMailer(loadConfig({ DATA_DIR: dataDir }), logger).driver).toBe('outbox');
    expect(createMailer(loadConfig({ DATA_DIR: dataDir, SMTP_URL: 'smtp://127.0.0.1:2525' }), logger).driver).toBe('smtp');
  });
});
