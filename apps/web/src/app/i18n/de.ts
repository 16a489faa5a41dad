import type { Catalogue } from './catalogue';
import { contractDe } from './contract-de';
import type { en } from './en';

export { contractDe };
export { contractEn } from './contract-en';
export { appPagesDe } from './app-pages-de';

/**
 * Deutsch: every key of en.ts, in the same shape (the type and i18n-parity.test.ts both check it), and the
 * contract's texts (contract-de.ts). Loaded only when chosen, so English pages carry none of it.
 */
export const de: Catalogue<typeof en> = {
  common: {
    productName: 'Latchkey',
    portalTitle: 'Self-Service-Portal',
    homeLink: 'Latchkey-Startseite',
    done: 'Fertig',
    cancel: 'Abbrechen',
    save: 'Speichern',
    remove: 'Entfernen',
    add: 'Hinzufügen',
    close: 'Schließen',
    back: 'Zurück',
    next: 'Weiter',
    finish: 'Abschließen',
    success: 'Erledigt',
    letsGetStarted: 'Los geht’s',
    loading: 'Wird geladen…',
    failedTitle: 'Fehlgeschlagen',
    loadFailed: 'Diese Seite konnte nicht geladen werden.',
    retry: 'Erneut versuchen',
    required: 'Pflichtfeld',
    copyCode: 'Code kopieren',
    copied: 'Kopiert',
    pickerFormat: 'Format: {{format}}',
    saved: 'Gespeichert',
    removed: 'Entfernt',
    offline: 'Keine Internetverbindung',
    requestFailed: 'Anfrage fehlgeschlagen',
  },
  language: {
    label: 'Sprache',
    choose: 'Sprache: {{language}}',
    names: { en: 'English', de: 'Deutsch' },
  },
  auth: {
    email: 'E-Mail',
    password: 'Passwort',
    displayName: 'Anzeigename',
    repeatPassword: 'Passwort wiederholen',
    login: 'Anmelden',
    loginTitle: 'Melden Sie sich an',
    register: 'Registrieren',
    registerTitle: 'Konto erstellen',
    noAccount: 'Noch kein Konto?',
    haveAccount: 'Sie haben schon ein Konto?',
    agreementPrefix: 'Ich stimme der ',
    privacyPolicy: 'Datenschutzerklärung zu',
    opensInNewTab: '(öffnet in einem neuen Tab)',
    logout: 'Abmelden',
    userMenu: 'Kontomenü',
    inviteTitle: 'Einladung annehmen',
    inviteIntro: 'Wählen Sie ein Passwort für {{email}}, um Ihr Konto fertig einzurichten.',
    inviteMissing:
      'Dieser Einladungslink ist unvollständig. Öffnen Sie bitte den Link aus Ihrer Einladungs-E-Mail erneut.',
    linkExpiredTitle: 'Einladungslink abgelaufen',
    linkExpired:
      'Dieser Aktivierungslink ist abgelaufen. Bitten Sie den Administrator, das Schloss erneut zu teilen.',
    choosePassword: 'Passwort festlegen',
    forgotLink: 'Passwort vergessen?',
    passkey: 'Anmeldung mit Passkey',
  },
  nav: {
    overview: 'Übersicht',
    locks: 'Schlösser',
    outbox: 'Postausgang',
    gettingStarted: 'Erste Schritte',
    partnerUsers: 'Partner-Nutzer',
    history: 'Verlauf',
    webhooks: 'Webhooks',
    applicationTabs: 'Bereiche der Anwendung',
    notFoundTitle: 'Seite nicht gefunden',
    notFoundText: 'Die gesuchte Seite gibt es nicht.',
    backToStart: 'Zu „Meine Anwendungen“',
  },
};
