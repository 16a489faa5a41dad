import { getI18n } from 'react-i18next';
import type { Catalogue } from '../../app/i18n/catalogue';

/**
 * The strings of the forgot-password, reset-password and verify-email pages, in both languages,
 * added to the tables when one of those pages loads: /login carries none of them (its JS budget,
 * bench/bundle-size.mjs). Typed with the other tables (app/i18n/i18next.d.ts).
 */
export const recoveryTextsEn = {
  recovery: {
    forgotTitle: 'Forgot your password?',
    forgotIntro: 'Enter the email address of your account. We will send you a link to choose a new password.',
    forgotSend: 'Send me a link',
    forgotSent: 'If {{email}} has an account, a link to choose a new password is on its way. It works once, for 30 minutes.',
    backToLogin: 'Back to login',
    resetTitle: 'Choose a new password',
    resetIntro: 'Choosing a new password signs you out everywhere, then signs you in here.',
    newPassword: 'New password',
    resetSubmit: 'Set new password',
    resetAskAgain: 'Send a new link',
    resetIncomplete: 'This link is incomplete. Open the link from the email again, or ask for a new one.',
    verifyTitle: 'Verify your email address',
    verifying: 'Verifying…',
    verifyDone: 'Thank you: your email address is verified.',
    verifyIncomplete: 'This link is incomplete. Open the link from the email again.',
    verifyContinue: 'Go to My Applications',
  },
} as const;

export const recoveryTextsDe: Catalogue<typeof recoveryTextsEn> = {
  recovery: {
    forgotTitle: 'Passwort vergessen?',
    forgotIntro: 'Geben Sie die E-Mail-Adresse Ihres Kontos ein. Wir senden Ihnen einen Link, mit dem Sie ein neues Passwort wählen.',
    forgotSend: 'Link senden',
    forgotSent: 'Wenn es für {{email}} ein Konto gibt, ist ein Link zum Wählen eines neuen Passworts unterwegs. Er funktioniert einmal, 30 Minuten lang.',
    backToLogin: 'Zurück zur Anmeldung',
    resetTitle: 'Neues Passwort wählen',
    resetIntro: 'Mit dem neuen Passwort werden Sie überall abgemeldet und hier angemeldet.',
    newPassword: 'Neues Passwort',
    resetSubmit: 'Neues Passwort speichern',
    resetAskAgain: 'Neuen Link anfordern',
    resetIncomplete: 'Dieser Link ist unvollständig. Öffnen Sie den Link aus der E-Mail erneut oder fordern Sie einen neuen an.',
    verifyTitle: 'E-Mail-Adresse bestätigen',
    verifying: 'Wird bestätigt …',
    verifyDone: 'Danke: Ihre E-Mail-Adresse ist bestätigt.',
    verifyIncomplete: 'Dieser Link ist unvollständig. Öffnen Sie den Link aus der E-Mail erneut.',
    verifyContinue: 'Zu „Meine Anwendungen“',
  },
};

/** Adds the texts to both languages' tables, once (the i18n instance knows whether it has them). */
export function addRecoveryTexts(): void {
  const i18n = getI18n();
  if (i18n.getResource('en', 'translation', 'recovery')) return;
  i18n.addResourceBundle('en', 'translation', recoveryTextsEn, true, false);
  i18n.addResourceBundle('de', 'translation', recoveryTextsDe, true, false);
}
