import type { EmailTexts } from './en.js';

/** The words of every email, in German (Sie-Form). Same entries as en.ts; the type keeps them in step. */
export const de: EmailTexts = {
  invitation: {
    subject: (app) => `Ihre Einladung zu ${app}`,
    heading: (app) => `Willkommen bei ${app}`,
    intro: (app, inviter) =>
      inviter
        ? `${inviter} hat Sie zu ${app} eingeladen. Nehmen Sie die Einladung an, um Ihr Konto zu erstellen.`
        : `Sie wurden zu ${app} eingeladen. Nehmen Sie die Einladung an, um Ihr Konto zu erstellen.`,
    codeHint:
      'Falls der Button nicht funktioniert, melden Sie sich mit Ihrer E-Mail-Adresse und diesem Einmalcode als Passwort an und wählen Sie dann Ihr eigenes Passwort:',
    action: 'Schlüssel annehmen',
  },
  sample: {
    subject: (sender, app) => (sender ? `${sender} hat einen Schlüssel mit Ihnen geteilt` : `Sie haben einen neuen Schlüssel für ${app}`),
    heading: (recipient) => (recipient ? `Hallo ${recipient}, Sie haben einen neuen Schlüssel` : 'Sie haben einen neuen Schlüssel'),
    given: (sender, lock) => {
      const door = lock ? `zur Tür „${lock}“` : 'zu einer Tür';
      return sender ? `${sender} hat Ihnen Zugang ${door} gegeben.` : `Sie haben Zugang ${door} erhalten.`;
    },
    howTo: (app) => `Nehmen Sie den Schlüssel in der App ${app} auf Ihrem Smartphone an und öffnen Sie die Tür, wenn Sie ankommen.`,
    action: 'Schlüssel annehmen',
  },
  keyShare: {
    expires: (when, sender) =>
      `Diese Einladung läuft am ${when} ab. Brauchen Sie den Zugang danach noch, bitten Sie ${sender ? `${sender},` : 'die Person, die ihn mit Ihnen geteilt hat,'} die Tür erneut mit Ihnen zu teilen.`,
  },
  footer: {
    privacy: 'Datenschutzerklärung',
    support: 'Support kontaktieren',
    essentials: (app) => `Sie erhalten diese E-Mail, weil sie für Ihre Nutzung von ${app} notwendig ist. Wir senden nur notwendige E-Mails.`,
  },
};
