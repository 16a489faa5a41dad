import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { trace } from '@opentelemetry/api';
import { startTracing, type SpanExporter } from '../../src/tracing.js';
import { loadConfig, type Env } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import type { TestApp } from '../helpers.js';
import { MemoryExporter } from '../fixtures/memory-exporter.js';

/**
 * Every flow that emails a one-time secret — email verification (the portal's body and the SDKs' `?code=`),
 * password reset, an invitation to the portal, a tile's sign-in link — run end to end over HTTP against a
 * service whose log goes to a captured stream (at LOG_LEVEL=trace, with ACCESS_LOG's line per request) and
 * whose spans go to an in-memory exporter: no secret of any flow appears in either, nor does the invitee's
 * address. Each emailed link is opened as a browser opens it (the fragment stays in the browser), and also
 * as a link mailed with its secrets in the query, which the log and the spans must redact.
 *
 * Nothing that loads pg, http or Fastify is imported above: they load after tracing has started, as in
 * main.ts (tracing.test.ts).
 */
const PUBLIC_URL = 'http://localhost:3000';
const exporter = new MemoryExporter();
let sdk: ReturnType<typeof startTracing>;
const cleanups: (() => Promise<void> | void)[] = [];

interface Service {
  t: TestApp;
  base: string;
  log: string[];
}

/** A migrated database of this run's kind, of its own (on PostgreSQL dropped after). */
async function freshDatabase(): Promise<Database> {
  const { createTestDatabase } = await import('../helpers.js');
  const { database, drop } = await createTestDatabase();
  cleanups.push(drop);
  return database;
}

/** A listening service whose every log line is kept. */
async function startService(env: Env): Promise<Service> {
  const { buildApp } = await import('../../src/app.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-secrets-'));
  const database = await freshDatabase();
  const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL, RATE_LIMIT_MAX: '100000', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', ...env });
  const log: string[] = [];
  const app: FastifyInstance = await buildApp(config, { database, logStream: { write: (line: string) => void log.push(line) } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const close = async () => {
    await app.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  cleanups.push(close);
  const t = { app, database, dataDir, close, secondInstance: () => Promise.reject(new Error('not here')) } satisfies TestApp;
  return { t, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, log };
}

/** What a browser sends for an emailed link: its path and query — never its fragment. */
function asBrowserRequests(link: string): string {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

/** The same link as it was mailed before its secrets moved to the fragment: them in the query. */
function asQueryLink(link: string): string {
  const url = new URL(link);
  return `${url.pathname}?${url.hash.slice(1)}`;
}

async function newestLink(service: Service, to: string, pathname: string): Promise<{ link: string; params: URLSearchParams }> {
  const { settleAccountMail } = await import('../../src/modules/account/account-trust.service.js');
  await settleAccountMail(service.t.app);
  const dir = path.join(service.t.dataDir, 'outbox');
  const pattern = new RegExp(`${PUBLIC_URL}${pathname}[^\\s)"<]*`);
  for (let tries = 0; tries < 100; tries++) {
    const texts = fs.existsSync(dir)
      ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { to: string; text: string })
      : [];
    const link = texts.filter((m) => m.to.toLowerCase() === to.toLowerCase()).map((m) => m.text.match(pattern)?.[0]).filter(Boolean).at(-1);
    if (link) return { link, params: new URLSearchParams(new URL(link).hash.slice(1)) };
    await new Promise((r) => setTimeout(r, 50)); // the tile's link is sent after its 202
  }
  throw new Error(`no ${pathname} link mailed to ${to}`);
}

/** Hands the spans ended so far to the exporter. */
async function flush(): Promise<void> {
  const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
  await provider.getDelegate?.().forceFlush?.();
}

beforeAll(() => {
  sdk = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing, exporter as unknown as SpanExporter);
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await sdk?.shutdown();
});

describe('one-time secrets in logs and traces', { timeout: 120_000 }, () => {
  it('no secret of the verification, reset, invitation or tile sign-in flow appears in the log or the spans', async () => {
    const service = await startService({ LOG_LEVEL: 'trace', ACCESS_LOG: 'true' });
    const { base } = service;
    const call = async (method: string, url: string, body?: object, token?: string) => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
    };
    const secrets: Record<string, string> = {};
    /** Opens an emailed link as a browser does, and as the older query-carrying link. */
    const open = async (link: string) => {
      expect(new URL(link).search, link).toBe('');
      await call('GET', asBrowserRequests(link));
      await call('GET', asQueryLink(link));
    };

    // Email verification: registration mails the link; the portal sends the code in a body.
    const email = `secrets-${randomUUID().slice(0, 8)}@example.com`;
    const registered = await call('POST', '/api/auth/register', { email, password: 'first-pass' });
    expect(registered.status, registered.text).toBe(200);
    const verification = await newestLink(service, email, '/verify-email');
    secrets.verifyCode = verification.params.get('code')!;
    await open(verification.link);
    expect((await call('PUT', '/api/account/email/verify', { code: secrets.verifyCode })).status).toBe(204);

    // The SDKs' form, for a second account: the code in the query, which the log and spans must redact.
    const sdkEmail = `secrets-sdk-${randomUUID().slice(0, 8)}@example.com`;
    expect((await call('POST', '/api/auth/register', { email: sdkEmail, password: 'first-pass' })).status).toBe(200);
    secrets.sdkVerifyCode = (await newestLink(service, sdkEmail, '/verify-email')).params.get('code')!;
    const sdkVerify = await call('PUT', `/api/account/email/verify?code=${secrets.sdkVerifyCode}`);
    expect(sdkVerify.status, sdkVerify.text).toBe(204);

    // Password reset.
    expect((await call('POST', '/api/account/password/reset/initialize', { email })).status).toBe(204);
    const reset = await newestLink(service, email, '/reset-password');
    secrets.resetToken = reset.params.get('token')!;
    await open(reset.link);
    const resetDone = await call('POST', '/api/account/password/reset/verify', { userId: reset.params.get('userId'), token: secrets.resetToken, password: 'second-pass' });
    expect(resetDone.status, resetDone.text).toBe(200);
    const signedIn = resetDone.json().authToken as string;

    // An invitation to the portal: the code is the first password.
    const invitee = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await call('POST', '/api/account/invite', { email: invitee }, signedIn);
    expect(invited.status, invited.text).toBe(204);
    const invitation = await newestLink(service, invitee, '/accept-invite');
    secrets.inviteCode = invitation.params.get('code')!;
    expect(invitation.params.get('email')).toBe(invitee);
    await open(invitation.link);
    const codeSignIn = await call('POST', '/api/auth/token', { email: invitee, password: secrets.inviteCode });
    expect(codeSignIn.status, codeSignIn.text).toBe(200);
    const chosen = await call('POST', '/api/account/password', { oldPassword: secrets.inviteCode, newPassword: 'chosen-pass' }, codeSignIn.json().authToken as string);
    expect(chosen.status, chosen.text).toBe(204);

    // A tile's sign-in link, for an application user a lock behind the tile is shared with.
    const { appUserToken, certify, createLock, createSandbox, share } = await import('../fixtures/operations.js');
    const sandbox = await createSandbox(service.t);
    const door = await createLock(service.t, sandbox.applicationId, { name: 'Logged Door' });
    const made = await call('POST', `/api/platform/application/${sandbox.applicationId}/lock/${door}/tile`, undefined, sandbox.owner.token);
    expect(made.status, made.text).toBe(201);
    const tileId = made.json().tileId as string;
    const doorUser = `door-${randomUUID().slice(0, 8)}@example.com`;
    await share(service.t, door, (await certify(service.t, await appUserToken(sandbox, `door-${randomUUID()}`, doorUser))).userId, { role: 'USER' });
    expect((await call('POST', `/api/tile/${tileId}/sign-in`, { email: doorUser })).status).toBe(202);
    const tileLink = await newestLink(service, doorUser, `/t/${tileId}`);
    secrets.tileSecret = tileLink.params.get('signin')!;
    await open(tileLink.link);
    const tileSignIn = await call('POST', '/api/tile/sign-in/verify', { token: secrets.tileSecret });
    expect(tileSignIn.status, tileSignIn.text).toBe(200);

    // An address in a path: the SDKs' share invitation names the invitee in its URL.
    await call('POST', `/api/share/invite/${encodeURIComponent(invitee)}`, {}, signedIn);

    await flush();
    const spans = exporter.spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events }));
    const recorded = `${service.log.join('')}\n${JSON.stringify(spans)}`;
    for (const [flow, secret] of Object.entries(secrets)) {
      expect(secret, flow).toMatch(/^[A-Za-z0-9_-]{6,}$/);
      expect(recorded.includes(secret), `${flow}'s secret is in the log or a span`).toBe(false);
      expect(recorded.includes(encodeURIComponent(secret)), `${flow}'s secret is in the log or a span`).toBe(false);
    }
    for (const address of [invitee, encodeURIComponent(invitee)]) expect(recorded.includes(`/${address}`), 'the invitee’s address in a logged URL').toBe(false);

    // Not vacuous: the log has a line for each link opened, its query redacted, and the spans have them too.
    const lines = service.log.map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } });
    const urls = lines.filter((l) => l.msg === 'request completed').map((l) => l.req?.url);
    expect(urls).toEqual(expect.arrayContaining(['/reset-password', '/reset-password?userId=REDACTED&token=REDACTED', '/api/account/email/verify?code=REDACTED', `/t/${tileId}?signin=REDACTED`]));
    expect(urls).toContain('/accept-invite?email=REDACTED&code=REDACTED');
    expect(JSON.stringify(spans)).toContain('signin=REDACTED');
  });

  it('writes no line per request by default, whatever the URL', async () => {
    const service = await startService({ LOG_LEVEL: 'info' });
    const secret = `default-${randomUUID()}`;
    const before = service.log.length;
    for (const url of [`/api/health?token=${secret}`, `/reset-password?token=${secret}`, `/api/account/email/verify?code=${secret}`])
      await fetch(`${service.base}${url}`, { method: url.includes('verify') ? 'PUT' : 'GET' });
    const during = service.log.slice(before);
    expect(during.join('')).not.toContain(secret);
    expect(during.filter((l) => /"msg":"(incoming request|request completed)"/.test(l))).toEqual([]);
  });
});
