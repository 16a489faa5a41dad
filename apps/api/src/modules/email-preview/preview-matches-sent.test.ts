import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lock, SentEmail } from '@latchkey/contract';
import { applications } from '../../db/schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer, createApplication, createOwner } from '../../../test/fixtures/platform-users.js';

/** The branding card's preview is the share invitation as sent: the same renderer draws both. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof createOwner>>;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
});
afterAll(() => t?.close());

const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: bearer(owner.token), ...(payload ? { payload } : {}) });

/** Every link of an email with its words: the buttons and footer links a reader can follow. */
function links(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)]
    .map(([, href, inner]) => `${inner!.replace(/<[^>]+>|&#(8202|8203);/g, '').replace(/\s+/g, ' ').trim()} → ${href}`)
    .sort();
}

/** An application (with the app link given), an invitation sent from it, and its branding preview. */
async function inviteAndPreview(appLink: string | null) {
  const appId = await createApplication(t, owner.userId, 'Acme Access');
  await t.app.db.update(applications).set({ appLink, privacyPolicy: 'https://acme.example/privacy' }).where(eq(applications.id, appId));
  const lock = (await call('POST', `/api/platform/application/${appId}/lock`, { name: 'Main Entrance' })).json() as Lock;
  expect((await call('POST', `/api/platform/application/${appId}/lock/${lock.id}/user`, { email: 'new.person@example.com', role: 'USER' })).statusCode).toBe(201);
  const [sent] = (await call('GET', `/api/platform/application/${appId}/outbox`)).json() as SentEmail[];
  expect(sent).toMatchObject({ kind: 'lock-invitation' });
  const sentHtml = (await call('GET', `/api/platform/application/${appId}/outbox/${sent!.id}`)).body;
  const preview = (await call('GET', `/api/email/preview/${appId}`)).body;
  return { sent: sentHtml, preview };
}

describe('the email preview and the email sent', () => {
  it('without an app link, neither has an "Accept Key" button, and both have the same links', async () => {
    const { sent, preview } = await inviteAndPreview(null);
    expect(sent).not.toContain('Accept Key');
    expect(preview).not.toContain('Accept Key');
    expect(links(preview)).toEqual(links(sent));
  });

  it('with an app link, both have the "Accept Key" button to it, and the same links', async () => {
    const { sent, preview } = await inviteAndPreview('https://acme.example/app');
    expect(links(sent)).toContain('Accept Key → https://acme.example/app');
    expect(links(preview)).toEqual(links(sent));
  });
});
