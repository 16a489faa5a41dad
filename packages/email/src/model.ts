import type { Language } from '@latchkey/contract';
import { oneLine, readableTextOn, safeHref, safeImageSrc, safePrimary, safeSecondary } from './safe.js';
import { emailTexts, type EmailTexts } from './texts/index.js';
import type { EmailBranding, EmailMessage } from './types.js';

/**
 * Everything the email shows, decided once: the HTML and the plain-text part are both drawn from this,
 * so they can never say different things. Every URL and colour in it has been checked (./safe.ts).
 */
export interface EmailModel {
  language: Language;
  subject: string;
  preheader: string;
  appName: string;
  logoSrc: string | null;
  primary: string;
  onPrimary: string;
  secondary: string;
  onSecondary: string;
  heading: string;
  paragraphs: string[];
  code: string | null;
  action: { text: string; href: string } | null;
  cta: { headline: string; text: string; href: string } | null;
  footer: {
    companyName: string;
    mailingAddress: string;
    privacyHref: string | null;
    supportHref: string | null;
    privacyLabel: string;
    supportLabel: string;
    essentialsLine: string | null;
  };
}

interface Content {
  subject: string;
  heading: string;
  paragraphs: string[];
  code: string | null;
  action: { text: string; href: string } | null;
}

/** A name as given, or null when it is blank (the texts then read without it). */
const named = (value: string | null | undefined) => value?.trim() || null;

/** A date and time as the recipient's language writes it, in UTC and saying so (the recipient's zone is unknown). */
function formatDate(date: Date, language: Language): string {
  return `${new Intl.DateTimeFormat(language, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}

function content(branding: EmailBranding, message: EmailMessage, words: EmailTexts, language: Language): Content {
  const app = branding.name.trim();
  switch (message.kind) {
    case 'invitation': {
      const href = safeHref(message.inviteUrl);
      return {
        subject: words.invitation.subject(app),
        heading: words.invitation.heading(app),
        paragraphs: [words.invitation.intro(app, named(message.inviterName)), words.invitation.codeHint],
        code: message.code,
        action: href ? { text: words.invitation.action, href } : null,
      };
    }
    case 'sample':
      // The preview and the branding test are the share email itself, with a sample door: the same
      // button (only with an app link), the same words, so what is previewed is what is sent.
      return content(branding, { kind: 'keyShare', lockName: message.lockName ?? '', recipientName: message.recipientName ?? null, acceptUrl: branding.appLink ?? null }, words, language);
    case 'keyShare': {
      const sender = named(message.sharedBy) ?? named(branding.emailPreferences.senderName);
      const distinctSender = sender && sender.toLowerCase() !== app.toLowerCase() ? sender : null;
      const href = safeHref(message.acceptUrl);
      const expiry = message.expiresAt ? [words.keyShare.expires(formatDate(message.expiresAt, language), distinctSender)] : [];
      return {
        subject: words.sample.subject(distinctSender, app),
        heading: words.sample.heading(named(message.recipientName)),
        paragraphs: [words.sample.given(distinctSender, named(message.lockName)), words.sample.howTo(app), ...expiry],
        code: null,
        action: href ? { text: words.sample.action, href } : null,
      };
    }
    case 'notice': {
      const href = message.action ? safeHref(message.action.url) : null;
      return {
        subject: message.subject,
        heading: message.heading,
        paragraphs: message.paragraphs,
        code: message.code ?? null,
        action: message.action && href ? { text: message.action.text, href } : null,
      };
    }
  }
}

export function buildEmailModel(branding: EmailBranding, message: EmailMessage, language: Language = 'en'): EmailModel {
  const prefs = branding.emailPreferences;
  const words = emailTexts(language);
  const primary = safePrimary(prefs.primaryColour);
  const secondary = safeSecondary(prefs.secondaryColour);
  const c = content(branding, message, words, language);
  const ctaHref = prefs.callToAction ? safeHref(prefs.callToAction.actionTarget) : null;
  const cta =
    prefs.callToAction && ctaHref && prefs.callToAction.actionText.trim()
      ? { headline: prefs.callToAction.headline, text: prefs.callToAction.actionText, href: ctaHref }
      : null;
  return {
    language,
    subject: oneLine(c.subject),
    preheader: oneLine(c.paragraphs[0] ?? c.heading),
    appName: branding.name,
    logoSrc: safeImageSrc(branding.logoUrl),
    primary,
    onPrimary: readableTextOn(primary),
    secondary,
    onSecondary: readableTextOn(secondary),
    heading: c.heading,
    paragraphs: c.paragraphs,
    code: c.code,
    action: c.action,
    cta,
    footer: {
      companyName: branding.companyName,
      mailingAddress: branding.mailingAddress,
      privacyHref: safeHref(branding.privacyPolicy),
      supportHref: safeHref(branding.supportContact),
      privacyLabel: words.footer.privacy,
      supportLabel: words.footer.support,
      essentialsLine: prefs.onlySendEssentialEmails ? words.footer.essentials(branding.name.trim()) : null,
    },
  };
}
