import { describe, expect, it } from 'vitest';
import { renderBrandedEmail } from './render.js';
import type { EmailBranding } from './types.js';

/** The share invitation is the branding card's key email, with the real lock, link and expiry. */
const branding: EmailBranding = {
  name: 'Acme Access',
  logoUrl: 'https://cdn.example.com/acme/logo.png',
  companyName: 'Acme Ltd',
  mailingAddress: '1 Road, Town',
  privacyPolicy: 'https://acme.example/privacy',
  supportContact: null,
  appLink: 'https://acme.example/app',
  emailPreferences: { senderName: 'Acme Security', primaryColour: '#AA2200', secondaryColour: '#00AA22', onlySendEssentialEmails: true, callToAction: null },
};
const expiresAt = new Date(Date.UTC(2026, 11, 24, 18, 30));

describe('key share email', () => {
  it('names the lock and sharer, links to the accept URL and says when it expires, in HTML and text alike', async () => {
    const mail = await renderBrandedEmail({ branding, message: { kind: 'keyShare', lockName: 'Front Door', acceptUrl: 'https://acme.example/app', expiresAt } });
    expect(mail.subject).toBe('Acme Security has shared a key with you');
    for (const part of [mail.html, mail.text]) {
      expect(part).toContain('Front Door');
      expect(part).toContain('https://acme.example/app');
      // Who to ask afterwards is who shared it, by name — not an unnamed 'admin'.
      expect(part).toContain(
        'This invitation expires on December 24, 2026 at 6:30 PM UTC. If you need it after that, ask Acme Security to share the door again.',
      );
    }
    expect(mail.html).toContain('#AA2200');
    expect(mail.html).toContain('https://cdn.example.com/acme/logo.png');
    expect(mail.text).toContain('Accept Key: https://acme.example/app');
    expect(mail.text).toContain('Acme Ltd');
  });

  it('leaves out the button without a usable link, and the expiry when there is none', async () => {
    const mail = await renderBrandedEmail({ branding, message: { kind: 'keyShare', lockName: 'Gate', sharedBy: 'Ada', acceptUrl: 'javascript:alert(1)' } });
    expect(mail.subject).toBe('Ada has shared a key with you');
    expect(mail.text).not.toContain('Accept Key');
    expect(mail.html).not.toContain('javascript:');
    expect(mail.text).not.toContain('expires');
  });

  it('is written in German when asked', async () => {
    const mail = await renderBrandedEmail({ branding, message: { kind: 'keyShare', lockName: 'Haustür', expiresAt }, language: 'de' });
    expect(mail.subject).toBe('Acme Security hat einen Schlüssel mit Ihnen geteilt');
    expect(mail.text).toContain(
      'Diese Einladung läuft am 24. Dezember 2026 um 18:30 UTC ab. Brauchen Sie den Zugang danach noch, bitten Sie Acme Security, die Tür erneut mit Ihnen zu teilen.',
    );
    expect(mail.text).toContain('Acme Security hat Ihnen Zugang zur Tür „Haustür“ gegeben.');
  });

  it('without a sharer’s name, says whom to ask in words', async () => {
    const unnamed = { ...branding, emailPreferences: { ...branding.emailPreferences, senderName: null } };
    const en = await renderBrandedEmail({ branding: unnamed, message: { kind: 'keyShare', lockName: 'Gate', expiresAt } });
    expect(en.text).toContain('If you need it after that, ask the person who shared it with you to share the door again.');
    const de = await renderBrandedEmail({ branding: unnamed, message: { kind: 'keyShare', lockName: 'Tor', expiresAt }, language: 'de' });
    expect(de.text).toContain('bitten Sie die Person, die ihn mit Ihnen geteilt hat, die Tür erneut mit Ihnen zu teilen.');
  });
});
