import { describe, expect, it } from 'vitest';
import { DEFAULT_PRIMARY_COLOUR, DEFAULT_SECONDARY_COLOUR } from '@latchkey/contract';
import { renderBrandedEmail } from './render.js';
import type { EmailBranding, EmailMessage } from './types.js';

const SCRIPT = '<script>alert(1)</script>';
const ATTR = '"><img src=x onerror=alert(1)>';

function branding(overrides: Partial<EmailBranding> = {}, prefs: Partial<EmailBranding['emailPreferences']> = {}): EmailBranding {
  return {
    name: 'Acme Doors',
    logoUrl: 'https://cdn.example.com/logos/a/logo.png',
    companyName: 'Acme Ltd',
    mailingAddress: '1 High Street, Town',
    privacyPolicy: 'https://acme.example/privacy',
    supportContact: 'mailto:help@acme.example',
    appLink: 'https://acme.example/app',
    ...overrides,
    emailPreferences: {
      senderName: 'Acme Team',
      senderEmail: 'team@acme.example',
      primaryColour: '#112233',
      secondaryColour: '#44AA66',
      onlySendEssentialEmails: false,
      callToAction: { headline: 'Need any help?', actionText: 'Get Help', actionTarget: 'https://acme.example/help' },
      ...prefs,
    },
  };
}
const sample: EmailMessage = { kind: 'sample' };
const render = (b: EmailBranding, m: EmailMessage = sample) => renderBrandedEmail({ branding: b, message: m });

/**
 * Script-like text must appear only escaped: walk every real tag (attribute values are double-quoted,
 * with quotes inside escaped) and check that no script-capable tag or event-handler attribute exists.
 */
function expectInert(html: string) {
  const tags = [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g)];
  expect(tags.length).toBeGreaterThan(10);
  for (const [, name, attrs] of tags) {
    expect(['script', 'iframe', 'object', 'embed', 'svg', 'style']).not.toContain(name!.toLowerCase());
    for (const [, attr, value] of (attrs ?? '').matchAll(/\s+([^\s=>/]+)(?:="([^"]*)")?/g)) {
      expect(attr!.toLowerCase().startsWith('on'), `attribute ${attr} on <${name}>`).toBe(false);
      if (attr === 'href' || attr === 'src') expect(value ?? '').toMatch(/^(https?:|mailto:)/);
    }
  }
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toContain('<img src=x');
}

describe('renderBrandedEmail', () => {
  it('renders subject, html and text with the content', async () => {
    const out = await render(branding());
    expect(out.subject).toBe('Acme Team has shared a key with you');
    expect(out.html).toMatch(/^<!DOCTYPE html/);
    // A document title (axe: document-title) — the subject, escaped like every other value.
    expect(out.html).toContain('<title>Acme Team has shared a key with you</title>');
    expect(out.html).toContain('Acme Doors');
    expect(out.html).toContain('src="https://cdn.example.com/logos/a/logo.png"');
    expect(out.html).toContain('href="https://acme.example/help"');
    expect(out.html).toContain('background-color:#112233');
    expect(out.html).toContain('background-color:#44AA66');
    for (const part of ['You have a new key', 'Acme Team has given you access to a door.', 'Accept Key', 'Need any help?', 'Get Help: https://acme.example/help', 'Acme Ltd', '1 High Street, Town', 'Privacy policy: https://acme.example/privacy', 'Contact support: mailto:help@acme.example']) {
      expect(out.text).toContain(part);
    }
  });

  it('renders an invitation with its link and code in both parts', async () => {
    const out = await render(branding(), { kind: 'invitation', inviteUrl: 'https://portal.example/login?invite=1', code: 'K7Q2-9XZP' });
    expect(out.subject).toBe("You're invited to Acme Doors");
    expect(out.html).toContain('href="https://portal.example/login?invite=1"');
    expect(out.html).toContain('K7Q2-9XZP');
    expect(out.text).toContain('Accept Key: https://portal.example/login?invite=1');
    expect(out.text).toContain('K7Q2-9XZP');
  });

  it.each([
    ['name', branding({ name: SCRIPT + ATTR })],
    ['companyName', branding({ companyName: SCRIPT + ATTR })],
    ['mailingAddress', branding({ mailingAddress: SCRIPT + ATTR })],
    ['privacyPolicy', branding({ privacyPolicy: `https://x.example/?q=${SCRIPT}${ATTR}` })],
    ['supportContact', branding({ supportContact: `https://x.example/"${SCRIPT}` })],
    ['logoUrl', branding({ logoUrl: `https://x.example/a.png?${ATTR}${SCRIPT}` })],
    ['senderName', branding({}, { senderName: SCRIPT + ATTR })],
    ['CTA headline', branding({}, { callToAction: { headline: SCRIPT + ATTR, actionText: 'x', actionTarget: 'https://x.example' } })],
    ['CTA text', branding({}, { callToAction: { headline: 'x', actionText: SCRIPT + ATTR, actionTarget: 'https://x.example' } })],
    ['CTA target', branding({}, { callToAction: { headline: 'x', actionText: 'y', actionTarget: `https://x.example/${ATTR}${SCRIPT}` } })],
    ['colours', branding({}, { primaryColour: `#fff"${SCRIPT}`, secondaryColour: `</style>${SCRIPT}` })],
  ])('escapes script-like text in %s', async (_field, b) => {
    const out = await render(b);
    expectInert(out.html);
    expect(out.html.match(/<script/gi)).toBeNull();
    const inv = await render(b, { kind: 'invitation', inviteUrl: `https://p.example/${ATTR}`, code: SCRIPT });
    expectInert(inv.html);
    expect(inv.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('keeps script-like text visible as text', async () => {
    const out = await render(branding({ companyName: SCRIPT }));
    expect(out.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out.text).toContain(SCRIPT); // plain text is not markup
  });

  it('falls back to the default colours when a colour is not hex', async () => {
    for (const bad of ['red', '#12', '#1234', 'url(https://evil.example)', '#112233;background:url(x)', '', 'expression(alert(1))']) {
      const out = await render(branding({}, { primaryColour: bad, secondaryColour: bad }));
      expect(out.html).toContain(`background-color:${DEFAULT_PRIMARY_COLOUR}`);
      expect(out.html).toContain(`background-color:${DEFAULT_SECONDARY_COLOUR}`);
      // The bad value never reaches a style (plain words like 'red' may occur in the text, e.g. "shared").
      if (bad) expect(out.html).not.toMatch(new RegExp(`(color|background-color):${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
    const short = await render(branding({}, { primaryColour: '#abc' }));
    expect(short.html).toContain('background-color:#abc');
  });

  it('leaves the call to action out when there is none', async () => {
    const out = await render(branding({}, { callToAction: null }));
    expect(out.html).not.toContain('Need any help?');
    expect(out.html).not.toContain('https://acme.example/help');
    expect(out.text).not.toContain('Need any help?');
  });

  it.each(['javascript:alert(1)', 'JAVASCRIPT:alert(1)', ' javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'ftp://x.example/', '//evil.example', 'not a url'])(
    'refuses the CTA target %s',
    async (target) => {
      const out = await render(branding({}, { callToAction: { headline: 'Need any help?', actionText: 'Get Help', actionTarget: target } }));
      expect(out.html).not.toContain('Get Help');
      expect(out.html.toLowerCase()).not.toContain('javascript:');
      expect(out.html).not.toContain('data:text/html');
      expect(out.html).not.toContain('vbscript:');
      expect(out.text).not.toContain('Get Help');
    },
  );

  it('accepts mailto and http CTA targets', async () => {
    const mail = await render(branding({}, { callToAction: { headline: 'h', actionText: 'Mail us', actionTarget: 'mailto:help@acme.example' } }));
    expect(mail.html).toContain('href="mailto:help@acme.example"');
    const http = await render(branding({}, { callToAction: { headline: 'h', actionText: 'Site', actionTarget: 'http://acme.example/help' } }));
    expect(http.html).toContain('href="http://acme.example/help"');
  });

  it('drops non-http logo, privacy and support links', async () => {
    const out = await render(branding({ logoUrl: 'javascript:alert(1)', privacyPolicy: 'javascript:alert(2)', supportContact: 'data:text/html,x' }));
    expect(out.html).not.toContain('<img');
    expect(out.html.toLowerCase()).not.toContain('javascript:');
    expect(out.html).not.toContain('data:text/html');
    expect(out.html).toContain('Acme Doors'); // the name stands in for the logo
    expect(out.text).not.toContain('Privacy policy:');
  });

  it('shows the essential-emails line only when onlySendEssentialEmails is set', async () => {
    const on = await render(branding({}, { onlySendEssentialEmails: true }));
    const off = await render(branding({}, { onlySendEssentialEmails: false }));
    expect(on.html).toContain('We only send essential emails.');
    expect(on.text).toContain('We only send essential emails.');
    expect(off.html).not.toContain('We only send essential emails.');
  });

  it('keeps the subject on one line', async () => {
    const out = await render(branding({}, { senderName: 'Evil\r\nBcc: victim@example.com' }));
    expect(out.subject).not.toMatch(/[\r\n]/);
  });

  it('fits the 624 px preview frame', async () => {
    const out = await render(branding());
    expect(out.html).toContain('max-width:600px');
    const widths = [...out.html.matchAll(/width[:=]"?(\d+)px/g)].map((m) => Number(m[1]));
    expect(Math.max(...widths)).toBeLessThanOrEqual(624);
  });

  it('writes the button text in a colour readable on the brand colour', async () => {
    const dark = await render(branding({}, { primaryColour: '#000000', secondaryColour: '#FFFFFF' }));
    expect(dark.html).toMatch(/background-color:#000000;color:#FFFFFF/);
    expect(dark.html).toMatch(/background-color:#FFFFFF;color:#111111/);
  });
});

describe('portalBranding', () => {
  it('renders an invitation in Latchkey colours without a call to action', async () => {
    const { portalBranding } = await import('./portal-branding.js');
    const out = await renderBrandedEmail({
      branding: portalBranding({ privacyPolicy: 'https://www.latchkey.dev/privacy' }),
      message: { kind: 'invitation', inviteUrl: 'http://localhost:3000/login', code: 'ABCD-1234', inviterName: 'Ada' },
    });
    expect(out.subject).toBe("You're invited to Latchkey");
    expect(out.html).toContain(`background-color:${DEFAULT_PRIMARY_COLOUR}`);
    expect(out.text).toContain('Ada has invited you to Latchkey.');
    expect(out.text).toContain('ABCD-1234');
    expect(out.text).toContain('Privacy policy: https://www.latchkey.dev/privacy');
    expect(out.text).not.toContain('Need any help?');
  });
});
