import { describe, expect, it } from 'vitest';
import { renderBrandedEmail } from '../render.js';
import type { EmailBranding, EmailMessage } from '../types.js';
import { de } from './de.js';
import { en } from './en.js';
import { pickLanguage } from './index.js';

function branding(senderName: string | null, name = 'Front Door'): EmailBranding {
  return {
    name,
    logoUrl: null,
    companyName: 'Front Door GmbH',
    mailingAddress: 'Hauptstraße 1, Berlin',
    privacyPolicy: 'https://frontdoor.example/privacy',
    supportContact: 'mailto:help@frontdoor.example',
    appLink: 'https://frontdoor.example/app',
    emailPreferences: { senderName, primaryColour: '#112233', secondaryColour: '#44AA66', onlySendEssentialEmails: true, callToAction: null },
  };
}
const render = (b: EmailBranding, message: EmailMessage, language?: 'en' | 'de') => renderBrandedEmail({ branding: b, message, language });

describe('email texts', () => {
  it('have the same entries in every language', () => {
    const shape = (o: object): string[] => Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? shape(v).map((s) => `${k}.${s}`) : [`${k}:${typeof v}`]));
    expect(shape(de)).toEqual(shape(en));
  });

  it('never name the application twice when the sender is named like it', async () => {
    const out = await render(branding('Front Door'), { kind: 'sample' });
    expect(out.subject).toBe('You have a new key for Front Door');
    expect(out.text).toContain('You have been given access to a door.');
    expect(out.text).toContain('Accept the key in the Front Door app');
    expect(out.text).not.toContain('Front Door has given you access');
  });

  it('name the sender, recipient and lock when given, and read without them when missing', async () => {
    const named = await render(branding('Ada Lovelace'), { kind: 'sample', recipientName: 'Sam', lockName: 'Main entrance' });
    expect(named.subject).toBe('Ada Lovelace has shared a key with you');
    expect(named.text).toContain('Hi Sam, you have a new key');
    expect(named.text).toContain('Ada Lovelace has given you access to the door “Main entrance”.');
    const bare = await render(branding('  '), { kind: 'sample', recipientName: ' ' });
    expect(bare.subject).toBe('You have a new key for Front Door');
    expect(bare.text).toContain('You have a new key\n');
    expect(bare.text).not.toMatch(/Hi\s*,/);
  });

  it('write every part in German when asked, the plain-text part included', async () => {
    const sample = await render(branding('Ada Lovelace'), { kind: 'sample', lockName: 'Haupteingang' }, 'de');
    expect(sample.subject).toBe('Ada Lovelace hat einen Schlüssel mit Ihnen geteilt');
    expect(sample.html).toMatch(/<html[^>]* lang="de"/);
    expect(sample.html).toContain('Schlüssel annehmen');
    expect(sample.text).toContain('Ada Lovelace hat Ihnen Zugang zur Tür „Haupteingang“ gegeben.');
    expect(sample.text).toContain('Datenschutzerklärung: https://frontdoor.example/privacy');
    expect(sample.text).toContain('Wir senden nur notwendige E-Mails.');
    expect(sample.text).not.toMatch(/Privacy policy|Accept Key|You /);

    const invite = await render(branding(null, 'Latchkey'), { kind: 'invitation', inviteUrl: 'https://p.example/accept', code: 'ABC', inviterName: null }, 'de');
    expect(invite.subject).toBe('Ihre Einladung zu Latchkey');
    expect(invite.text).toContain('Sie wurden zu Latchkey eingeladen.');
    expect(invite.text).toContain('Schlüssel annehmen: https://p.example/accept');

    const bare = await render(branding(null), { kind: 'sample' }, 'de');
    expect(bare.text).toContain('Sie haben Zugang zu einer Tür erhalten.');
  });

  it('pick the reader’s first supported language from Accept-Language', () => {
    expect(pickLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de');
    expect(pickLanguage('fr-FR, en-GB;q=0.8')).toBe('en');
    expect(pickLanguage('fr')).toBe('en');
    expect(pickLanguage(undefined)).toBe('en');
  });
});
