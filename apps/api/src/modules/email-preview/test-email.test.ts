import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messages, TEST_EMAIL_LIMIT, testEmailErrors, type Application, type SentEmail } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/**
 * "Send a test email" — the card's unsaved branding, to the signed-in owner, through the
 * configured mailer (an in-process SMTP server here; the file outbox in the embedded default), kept in
 * the application's sandbox Outbox, rate-limited per owner, and changing nothing of the application.
 */
interface Received {
  to: string[];
  raw: string;
}
const received: Received[] = [];
let rejectMail = false;
let smtp: SMTPServer;
let t: TestApp;
let embedded: TestApp;

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (rejectMail) return callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  const port = (smtp.server.address() as AddressInfo).port;
  t = await createTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}` });
  embedded = await createTestApp();
});

afterAll(async () => {
  await t?.close();
  await embedded?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

beforeEach(() => {
  received.length = 0;
  rejectMail = false;
});

async function ownerWithApp(on: TestApp) {
  const owner = await createOwner(on);
  const appId = await createApplication(on, owner.userId, 'Front Door Co');
  return { owner, appId };
}
const sendTest = (on: TestApp, token: string, appId: string, payload: unknown) =>
  on.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/email/test`, headers: bearer(token), payload: payload as object });
const outbox = async (on: TestApp, token: string, appId: string) =>
  (await on.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/outbox`, headers: bearer(token) })).json() as SentEmail[];

const unsaved = {
  senderName: 'Unsaved Sender',
  senderEmail: 'hello@partner.example',
  primaryColour: '#123456',
  secondaryColour: '#abcdef',
  onlySendEssentialEmails: false,
  callToAction: { headline: 'Questions?', actionText: 'Ask us', actionTarget: 'https://partner.example/help' },
};

describe('POST …/email/test over SMTP', () => {
  it('sends the unsaved branding to the signed-in owner only, keeps it in the Outbox, changes nothing', async () => {
    const { owner, appId } = await ownerWithApp(t);
    const res = await sendTest(t, owner.token, appId, { emailPreferences: unsaved });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ to: owner.email, driver: 'smtp' });

    expect(received).toHaveLength(1);
    expect(received[0]!.to).toEqual([owner.email]);
    const raw = received[0]!.raw.replace(/=\r?\n/g, '');
    expect(raw).toMatch(/^Subject: \[Test\] /m);
    expect(raw).toContain('#123456');
    expect(raw).toContain('Ask us');
    expect(raw).toContain('https://partner.example/help');

    const sent = await outbox(t, owner.token, appId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ kind: 'branding-test', to: owner.email });
    expect(sent[0]!.subject.startsWith('[Test] ')).toBe(true);
    const html = await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}/outbox/${sent[0]!.id}`, headers: bearer(owner.token) });
    expect(html.body).toContain('#123456');

    // The application keeps its saved branding.
    const app = (await t.app.inject({ method: 'GET', url: `/api/platform/application/${appId}`, headers: bearer(owner.token) })).json() as Application;
    expect(app.emailPreferences).toMatchObject({ primaryColour: '#00283C', senderName: null, callToAction: null });
  });

  it('an empty body part sends the saved branding; German when asked', async () => {
    const { owner, appId } = await ownerWithApp(t);
    const res = await sendTest(t, owner.token, appId, { emailPreferences: {}, language: 'de' });
    expect(res.statusCode, res.body).toBe(200);
    expect(received[0]!.raw).toContain('#00283C');
    expect(received[0]!.raw).toMatch(/Content-Language: de|lang="de"|lang=3D"de"/);
  });

  it('bad branding: 400 with the contract message, nothing sent or kept', async () => {
    const { owner, appId } = await ownerWithApp(t);
    for (const [payload, message] of [
      [{ emailPreferences: { primaryColour: 'blue' } }, messages.invalidHexColour],
      [{ emailPreferences: { senderEmail: 'not-an-address' } }, messages.invalidEmail],
      [{ emailPreferences: { callToAction: { headline: 'x', actionText: 'y', actionTarget: 'javascript:alert(1)' } } }, messages.invalidUrlOrMailto],
    ] as const) {
      const res = await sendTest(t, owner.token, appId, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(message);
    }
    expect((await sendTest(t, owner.token, appId, {})).statusCode).toBe(400);
    expect((await sendTest(t, owner.token, appId, { emailPreferences: {}, language: 'fr' })).statusCode).toBe(400);
    expect(received).toEqual([]);
    expect(await outbox(t, owner.token, appId)).toEqual([]);
  });

  it('only owners: anyone else 404, signed out 401', async () => {
    const { appId } = await ownerWithApp(t);
    const stranger = await createOwner(t);
    expect((await sendTest(t, stranger.token, appId, { emailPreferences: {} })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/email/test`, payload: { emailPreferences: {} } })).statusCode).toBe(401);
    expect(received).toEqual([]);
  });

  it(`is limited to ${TEST_EMAIL_LIMIT.max} per owner and window: then 429 with Retry-After`, async () => {
    const { owner, appId } = await ownerWithApp(t);
    for (let i = 0; i < TEST_EMAIL_LIMIT.max; i += 1) expect((await sendTest(t, owner.token, appId, { emailPreferences: {} })).statusCode).toBe(200);
    const limited = await sendTest(t, owner.token, appId, { emailPreferences: {} });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(received).toHaveLength(TEST_EMAIL_LIMIT.max);
    // Per owner: another owner still may.
    const other = await ownerWithApp(t);
    expect((await sendTest(t, other.owner.token, other.appId, { emailPreferences: {} })).statusCode).toBe(200);
  });

  it('a mailer that refuses: 502 with a clear message, nothing kept in the Outbox', async () => {
    const { owner, appId } = await ownerWithApp(t);
    rejectMail = true;
    const res = await sendTest(t, owner.token, appId, { emailPreferences: unsaved });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ code: 502, message: testEmailErrors.mailerFailed });
    expect(await outbox(t, owner.token, appId)).toEqual([]);
  });
});

describe('POST …/email/test in the embedded default', () => {
  it('lands in the file outbox and the sandbox Outbox', async () => {
    const { owner, appId } = await ownerWithApp(embedded);
    const res = await sendTest(embedded, owner.token, appId, { emailPreferences: { primaryColour: '#654321' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ to: owner.email, driver: 'outbox' });
    const dir = path.join(embedded.dataDir, 'outbox');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    const mails = files.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { to: string; subject: string; html: string });
    const mine = mails.filter((m) => m.to === owner.email);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.subject.startsWith('[Test] ')).toBe(true);
    expect(mine[0]!.html).toContain('#654321');
    expect((await outbox(embedded, owner.token, appId)).map((e) => e.kind)).toEqual(['branding-test']);
  });
});
