import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRIMARY_COLOUR, messages } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { applications } from '../../db/schema.js';
import { seedApplication } from '../../../test/fixtures/logos.js';
import { createOwner } from '../../../test/fixtures/platform-users.js';

const PAYLOAD = `<img src=x onerror="alert(1)"><script>alert(1)</script>"'><svg onload=alert(1)>`;
let t: TestApp;
let appId: string;
/** An owner of appId: the overrides are answered to an owner only. */
let owner: { userId: string; token: string };
const previewAs = (token: string | null, query = '', id = appId) =>
  t.app.inject({ url: `/api/email/preview/${id}${query ? `?${query}` : ''}`, headers: token ? { authorization: `Bearer ${token}` } : {} });
const preview = (query = '', id = appId) => previewAs(owner.token, query, id);
const anonymous = (query = '', id = appId) => previewAs(null, query, id);
const qs = (o: Record<string, string>) => new URLSearchParams(o).toString();

/** No script-capable tag and no event-handler attribute anywhere in the markup. */
function expectInert(html: string) {
  const tags = [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g)];
  expect(tags.length).toBeGreaterThan(10);
  for (const [, name, attrs] of tags) {
    expect(['script', 'iframe', 'object', 'embed', 'svg']).not.toContain(name!.toLowerCase());
    for (const [, attr] of (attrs ?? '').matchAll(/\s+([^\s=>/]+)(?:="[^"]*")?/g)) expect(attr!.toLowerCase().startsWith('on')).toBe(false);
  }
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await createOwner(t);
  appId = await seedApplication(t, owner.userId, {
    name: `Acme ${PAYLOAD}`,
    companyName: PAYLOAD,
    mailingAddress: PAYLOAD,
    senderName: PAYLOAD,
    privacyPolicy: 'https://acme.example/privacy',
    supportContact: 'mailto:help@acme.example',
    appLink: 'https://acme.example/app',
    primaryColour: '#123456',
    secondaryColour: '#654321',
    onlySendEssentialEmails: true,
    callToAction: { headline: 'Stored headline', actionText: 'Stored text', actionTarget: 'https://acme.example/help' },
  });
});
afterAll(() => t?.close());

describe('GET /email/preview/:applicationId', () => {
  it('renders the stored branding as HTML with a strict CSP, without a token', async () => {
    const res = await anonymous();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src https: http: data:');
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).not.toContain('script-src');
    expect(res.body).toContain('background-color:#123456');
    expect(res.body).toContain('Stored headline');
    expect(res.body).toContain('href="https://acme.example/help"');
    expect(res.body).toContain('We only send essential emails.');
  });

  it('writes the sample in the language asked for, English by default; refuses an unknown one', async () => {
    const de = await preview(qs({ lang: 'de' }));
    expect(de.statusCode).toBe(200);
    expect(de.body).toMatch(/<html[^>]* lang="de"/);
    expect(de.body).toContain('Schlüssel annehmen');
    expect(de.body).toContain('Wir senden nur notwendige E-Mails.');
    expect((await preview()).body).toContain('Accept Key');
    const bad = await preview(qs({ lang: 'xx' }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 400 });
  });

  it('escapes every stored value', async () => {
    const res = await preview();
    expectInert(res.body);
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('applies the query overrides, escaped', async () => {
    const res = await preview(qs({ ctaHeadline: PAYLOAD, ctaAbridged: 'Get Help', ctaTarget: 'mailto:support@acme.example', primaryColour: '#abc', secondaryColour: '#00FF00' }));
    expect(res.statusCode).toBe(200);
    expectInert(res.body);
    expect(res.body).toContain('background-color:#abc');
    expect(res.body).toContain('background-color:#00FF00');
    expect(res.body).toContain('Get Help');
    expect(res.body).toContain('href="mailto:support@acme.example"');
    expect(res.body).not.toContain('Stored headline');
  });

  it('ignores empty values and keeps the stored ones for missing CTA parts', async () => {
    const res = await preview(qs({ ctaHeadline: 'New headline', ctaTarget: '', primaryColour: '' }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('New headline');
    expect(res.body).toContain('Stored text');
    expect(res.body).toContain('href="https://acme.example/help"');
    expect(res.body).toContain('background-color:#123456');
  });

  it('shows the card\'s unsaved sender name, essentials choice and a switched-off call to action', async () => {
    const res = await preview(qs({ senderName: 'Zed from Support', onlySendEssentialEmails: 'false', cta: 'none' }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Zed from Support');
    expect(res.body).not.toContain('Stored headline');
    const stored = await preview();
    expect(stored.body).not.toContain('Zed from Support');
    expect(stored.body).toContain('Stored headline');
    // The essentials line follows the unsaved choice.
    const essentials = await preview(qs({ onlySendEssentialEmails: 'true' }));
    expect(res.body.length).toBeLessThan(essentials.body.length);
    // Caller-chosen text like the others: an owner's only.
    expect((await anonymous(qs({ senderName: 'Your bank' }))).statusCode).toBe(401);
    expect((await preview(qs({ cta: 'all' }))).statusCode).toBe(400);
  });

  it('uses the default call to action for missing parts when none is stored', async () => {
    const bare = await seedApplication(t, owner.userId);
    const none = await preview('', bare);
    expect(none.body).not.toContain('Need any help?');
    expect(none.body).toContain(`background-color:${DEFAULT_PRIMARY_COLOUR}`);
    const withCta = await preview(qs({ ctaAbridged: 'Get Help' }), bare);
    expect(withCta.body).toContain('Need any help?');
    expect(withCta.body).toContain('Get Help');
  });

  it.each([
    [{ primaryColour: 'red' }, messages.invalidHexColour],
    [{ secondaryColour: '#12345' }, messages.invalidHexColour],
    [{ primaryColour: '#fff;background:url(x)' }, messages.invalidHexColour],
    [{ ctaTarget: 'javascript:alert(1)' }, messages.invalidUrlOrMailto],
    [{ ctaTarget: 'data:text/html,<script>alert(1)</script>' }, messages.invalidUrlOrMailto],
    [{ ctaHeadline: 'x'.repeat(201) }, messages.tooLong],
  ])('refuses %o with 400', async (query, message) => {
    const res = await preview(qs(query));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(message);
  });

  it('answers 404 for an unknown or malformed application id', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', `${randomUUID()}'--`]) {
      const res = await preview('', encodeURIComponent(id));
      expect(res.statusCode, id).toBe(404);
      expect(res.json().code).toBe(404);
    }
  });

  it('answers 400 for an id with a control, bidi or line-separator character (the contract idParam)', async () => {
    for (const [id, message] of [
      [`${randomUUID()}\u0000`, messages.controlCharacters],
      [`\u202E${randomUUID()}`, messages.bidiControls],
      [`${randomUUID()}\u2028`, messages.lineBreaks],
    ] as const) {
      const res = await preview('', encodeURIComponent(id));
      expect(res.statusCode, JSON.stringify(id)).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, message: expect.stringContaining(message) });
    }
  });

  describe('overrides need a signed-in owner', () => {
    const hostile = qs({ ctaHeadline: 'Your account is locked', ctaAbridged: 'Sign in again', ctaTarget: 'https://evil.example/login', primaryColour: '#ff0000' });

    it('refuses caller-chosen text, link or colours without a token (401), rendering nothing of them', async () => {
      for (const query of [hostile, qs({ ctaHeadline: 'x' }), qs({ ctaTarget: 'https://evil.example/' }), qs({ primaryColour: '#abc' }), qs({ secondaryColour: '#abc' }), qs({ ctaAbridged: 'x', lang: 'de' })]) {
        const res = await anonymous(query);
        expect(res.statusCode, query).toBe(401);
        expect(res.body).not.toContain('evil.example');
        expect(res.headers['content-type'], query).toMatch(/^application\/json/);
      }
      // A bad or expired token is no better.
      expect((await previewAs('not-a-token', hostile)).statusCode).toBe(401);
    });

    it('answers a signed-in non-owner with the same 404 as an unknown application', async () => {
      const stranger = await createOwner(t);
      const res = await previewAs(stranger.token, hostile);
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('evil.example');
    });

    it('serves the overrides to an owner, uncached', async () => {
      const res = await preview(hostile);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('href="https://evil.example/login"');
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    });

    it('still shows the saved branding to anyone, in any language, empty override fields ignored', async () => {
      const res = await anonymous(qs({ lang: 'de', ctaHeadline: '', primaryColour: '' }));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Stored headline');
      expect(res.body).toContain('background-color:#123456');
      expect(res.headers['cache-control']).toBe('no-cache');
    });
  });

  it('shows a change at once (the cache is keyed by version)', async () => {
    const id = await seedApplication(t, null, { name: 'Before' });
    expect((await preview('', id)).body).toContain('Before');
    await t.database.db.update(applications).set({ name: 'After', version: sql`${applications.version} + 1` }).where(eq(applications.id, id));
    const after = await preview('', id);
    expect(after.body).toContain('After');
    expect(after.body).not.toContain('Before');
  });
});
