import type { Language } from '@latchkey/contract';
import { renderBrandedEmail } from './render.js';
import type { EmailBranding, EmailMessage, RenderedEmail } from './types.js';

const render = (branding: EmailBranding, message: EmailMessage, language: Language) => renderBrandedEmail({ branding, message, language });

/**
 * The emails the platform sends about an account itself: a password-reset link, an
 * email-verification link, a new key's six-digit code, a new passkey's six-digit code and the notice that one
 * was added. In the portal's branding and the reader's language,
 * rendered like every other email (HTML and a plain-text part).
 */
export type AccountEmail =
  | { kind: 'passwordReset'; url: string; minutes: number }
  | { kind: 'verifyEmail'; url: string; hours: number }
  | { kind: 'keyCode'; code: string; minutes: number }
  | { kind: 'passkeyCode'; code: string; minutes: number }
  | { kind: 'passkeyAdded'; name: string; url: string };

const texts = {
  en: {
    passwordReset: (minutes: number) => ({
      subject: 'Reset your Latchkey password',
      heading: 'Reset your password',
      paragraphs: [
        `Someone — hopefully you — asked to reset the password of your Latchkey account. The link works once, for ${minutes} minutes.`,
        'Choosing a new password signs you out everywhere. If you did not ask for this, ignore this email: your password stays as it is.',
      ],
      action: 'Choose a new password',
    }),
    verifyEmail: (hours: number) => ({
      subject: 'Verify your email address for Latchkey',
      heading: 'Is this your email address?',
      paragraphs: [
        `Confirm that this address belongs to your Latchkey account. The link works for ${hours} hours.`,
        'Until then the platform sends only a few emails a day for your account.',
      ],
      action: 'Verify my email address',
    }),
    keyCode: (minutes: number) => ({
      subject: 'Your Latchkey verification code',
      heading: 'Confirm your new key',
      paragraphs: [
        `A device signed in to your Latchkey account wants a new key to open doors. Enter this code there within ${minutes} minutes:`,
        'If that was not you, do not share the code — and change your password.',
      ],
      action: '',
    }),
    passkeyCode: (minutes: number) => ({
      subject: 'Your Latchkey code for a new passkey',
      heading: 'Confirm your new passkey',
      paragraphs: [
        `Someone signed in to your Latchkey account wants to add a passkey to it. Enter this code there within ${minutes} minutes:`,
        'If that was not you, do not share the code — and change your password.',
      ],
      action: '',
    }),
    passkeyAdded: (name: string) => ({
      subject: 'A passkey was added to your Latchkey account',
      heading: 'A passkey was added',
      paragraphs: [
        `The passkey “${name}” now signs in to your Latchkey account, and new keys of a session it signed in need no emailed code.`,
        'If that was not you, remove it on your account page and change your password.',
      ],
      action: 'Review your passkeys',
    }),
  },
  de: {
    passwordReset: (minutes: number) => ({
      subject: 'Ihr Latchkey-Passwort zurücksetzen',
      heading: 'Passwort zurücksetzen',
      paragraphs: [
        `Jemand – hoffentlich Sie – möchte das Passwort Ihres Latchkey-Kontos zurücksetzen. Der Link funktioniert einmal, ${minutes} Minuten lang.`,
        'Mit dem neuen Passwort werden Sie überall abgemeldet. Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.',
      ],
      action: 'Neues Passwort wählen',
    }),
    verifyEmail: (hours: number) => ({
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse für Latchkey',
      heading: 'Ist das Ihre E-Mail-Adresse?',
      paragraphs: [
        `Bestätigen Sie, dass diese Adresse zu Ihrem Latchkey-Konto gehört. Der Link funktioniert ${hours} Stunden lang.`,
        'Bis dahin versendet die Plattform für Ihr Konto nur wenige E-Mails am Tag.',
      ],
      action: 'E-Mail-Adresse bestätigen',
    }),
    keyCode: (minutes: number) => ({
      subject: 'Ihr Latchkey-Bestätigungscode',
      heading: 'Bestätigen Sie Ihren neuen Schlüssel',
      paragraphs: [
        `Ein bei Ihrem Latchkey-Konto angemeldetes Gerät möchte einen neuen Schlüssel zum Öffnen von Türen. Geben Sie dort innerhalb von ${minutes} Minuten diesen Code ein:`,
        'Wenn Sie das nicht waren, geben Sie den Code nicht weiter – und ändern Sie Ihr Passwort.',
      ],
      action: '',
    }),
    passkeyCode: (minutes: number) => ({
      subject: 'Ihr Latchkey-Code für einen neuen Passkey',
      heading: 'Bestätigen Sie Ihren neuen Passkey',
      paragraphs: [
        `Jemand, der bei Ihrem Latchkey-Konto angemeldet ist, möchte ihm einen Passkey hinzufügen. Geben Sie dort innerhalb von ${minutes} Minuten diesen Code ein:`,
        'Wenn Sie das nicht waren, geben Sie den Code nicht weiter – und ändern Sie Ihr Passwort.',
      ],
      action: '',
    }),
    passkeyAdded: (name: string) => ({
      subject: 'Ihrem Latchkey-Konto wurde ein Passkey hinzugefügt',
      heading: 'Ein Passkey wurde hinzugefügt',
      paragraphs: [
        `Mit dem Passkey „${name}“ kann man sich jetzt bei Ihrem Latchkey-Konto anmelden, und neue Schlüssel einer damit angemeldeten Sitzung brauchen keinen Code per E-Mail.`,
        'Wenn Sie das nicht waren, entfernen Sie ihn auf Ihrer Kontoseite und ändern Sie Ihr Passwort.',
      ],
      action: 'Passkeys ansehen',
    }),
  },
} satisfies Record<Language, Record<AccountEmail['kind'], (arg: never) => { subject: string; heading: string; paragraphs: string[]; action: string }>>;

export async function renderAccountEmail(branding: EmailBranding, email: AccountEmail, language: Language = 'en'): Promise<RenderedEmail> {
  const table = texts[language] ?? texts.en;
  switch (email.kind) {
    case 'passwordReset': {
      const w = table.passwordReset(email.minutes);
      return render(branding, { kind: 'notice', subject: w.subject, heading: w.heading, paragraphs: w.paragraphs, action: { text: w.action, url: email.url } }, language);
    }
    case 'verifyEmail': {
      const w = table.verifyEmail(email.hours);
      return render(branding, { kind: 'notice', subject: w.subject, heading: w.heading, paragraphs: w.paragraphs, action: { text: w.action, url: email.url } }, language);
    }
    case 'keyCode': {
      const w = table.keyCode(email.minutes);
      return render(branding, { kind: 'notice', subject: w.subject, heading: w.heading, paragraphs: w.paragraphs, code: email.code }, language);
    }
    case 'passkeyCode': {
      const w = table.passkeyCode(email.minutes);
      return render(branding, { kind: 'notice', subject: w.subject, heading: w.heading, paragraphs: w.paragraphs, code: email.code }, language);
    }
    case 'passkeyAdded': {
      const w = table.passkeyAdded(email.name);
      return render(branding, { kind: 'notice', subject: w.subject, heading: w.heading, paragraphs: w.paragraphs, action: { text: w.action, url: email.url } }, language);
    }
  }
}
