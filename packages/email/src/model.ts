import { oneLine, readableTextOn, safeHref, safeImageSrc, safePrimary, safeSecondary } from './safe.js';
import type { EmailBranding, EmailMessage } from './types.js';

/**
 * Everything the email shows, decided once: the HTML and the plain-text part are both drawn from this,
 * so they can never say different things. Every URL and colour in it has been checked (./safe.ts).
 */
export interface EmailModel {
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
    essentialsLine: string | null;
  };
}

/** The sample's button target when the application has no app link: a placeholder, never followed. */
const SAMPLE_ACCEPT_URL = 'https://example.com/accept-key';

function content(branding: EmailBranding, message: EmailMessage) {
  const app = branding.name;
  const sender = branding.emailPreferences.senderName?.trim() || app;
  switch (message.kind) {
    case 'invitation': {
      const href = safeHref(message.inviteUrl);
      const who = message.inviterName?.trim() ? `${message.inviterName.trim()} has invited you` : 'You have been invited';
      return {
        subject: `You're invited to ${app}`,
        heading: `Welcome to ${app}`,
        paragraphs: [
          `${who} to ${app}. Accept the invitation to create your account.`,
          'If the button does not work, sign in with your email address and this one-time code as the password, then choose your own password:',
        ],
        code: message.code,
        // The label spec §8's pending-invite message points the invitee to.
        action: href ? { text: 'Accept Key', href } : null,
      };
    }
    case 'sample':
      return {
        subject: `${sender} has shared a key with you`,
        heading: `${message.recipientName?.trim() ? `Hi ${message.recipientName.trim()}, you` : 'You'} have been sent a key`,
        paragraphs: [
          `${sender} has given you access to a door with ${app}.`,
          'Tap the button below on your phone to accept the key and unlock the door when you arrive.',
        ],
        code: null,
        action: { text: 'Accept Key', href: safeHref(branding.appLink) ?? SAMPLE_ACCEPT_URL },
      };
    case 'notice': {
      const href = message.action ? safeHref(message.action.url) : null;
      return {
        subject: message.subject,
        heading: message.heading,
        paragraphs: message.paragraphs,
        code: null,
        action: message.action && href ? { text: message.action.text, href } : null,
      };
    }
  }
}

export function buildEmailModel(branding: EmailBranding, message: EmailMessage): EmailModel {
  const prefs = branding.emailPreferences;
  const primary = safePrimary(prefs.primaryColour);
  const secondary = safeSecondary(prefs.secondaryColour);
  const c = content(branding, message);
  const ctaHref = prefs.callToAction ? safeHref(prefs.callToAction.actionTarget) : null;
  const cta =
    prefs.callToAction && ctaHref && prefs.callToAction.actionText.trim()
      ? { headline: prefs.callToAction.headline, text: prefs.callToAction.actionText, href: ctaHref }
      : null;
  return {
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
      essentialsLine: prefs.onlySendEssentialEmails
        ? `You receive this email because it is essential to your use of ${branding.name}. We only send essential emails.`
        : null,
    },
  };
}
