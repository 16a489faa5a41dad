import {
  DEFAULT_PRIMARY_COLOUR,
  DEFAULT_SECONDARY_COLOUR,
  type Application,
  type CallToAction,
  type CreateApplication,
  type UpdateApplication,
} from '@latchkey/contract';

/** The wizard's inputs by step, as the four forms hold them. */
export interface WizardValues {
  0: { name: string; companyName: string; mailingAddress: string };
  1: { privacyPolicy: string; supportContact: string; appLink: string };
  2: { senderEmail: string; senderName: string; onlySendEssentialEmails: boolean; callToAction: CallToAction | null };
  3: { logoUrl: string; primaryColour: string; secondaryColour: string };
}
export type WizardStep = 0 | 1 | 2 | 3;
/** What a step's form held when the user pressed Back: kept, valid or not, but not saved. */
export type WizardDrafts = Partial<WizardValues>;
export const LAST_STEP: WizardStep = 3;

export const initialWizardValues: WizardValues = {
  0: { name: '', companyName: '', mailingAddress: '' },
  1: { privacyPolicy: '', supportContact: '', appLink: '' },
  2: { senderEmail: '', senderName: '', onlySendEssentialEmails: true, callToAction: null },
  3: { logoUrl: '', primaryColour: DEFAULT_PRIMARY_COLOUR, secondaryColour: DEFAULT_SECONDARY_COLOUR },
};

/** What a stored application already holds, as the four steps' forms (to resume its setup). */
export function wizardValuesOf(app: Application): WizardValues {
  const prefs = app.emailPreferences;
  return {
    0: { name: app.name, companyName: app.companyName, mailingAddress: app.mailingAddress },
    1: { privacyPolicy: app.privacyPolicy ?? '', supportContact: app.supportContact ?? '', appLink: app.appLink ?? '' },
    2: {
      senderEmail: prefs.senderEmail ?? '',
      senderName: prefs.senderName ?? '',
      onlySendEssentialEmails: prefs.onlySendEssentialEmails,
      callToAction: prefs.callToAction,
    },
    3: { logoUrl: app.logoUrl ?? '', primaryColour: prefs.primaryColour, secondaryColour: prefs.secondaryColour },
  };
}

/**
 * The wizard steps an application left unfinished: a step whose required values the server has not got.
 * (Branding has defaults, so a stored application always has it; resuming goes through it anyway.)
 */
export function unfinishedSteps(app: Application): WizardStep[] {
  const steps: WizardStep[] = [];
  if (!app.privacyPolicy || !app.supportContact) steps.push(1);
  if (!app.emailPreferences.senderEmail || !app.emailPreferences.senderName) steps.push(2);
  return steps;
}

export type StepCall = { kind: 'create'; body: CreateApplication } | { kind: 'update'; body: UpdateApplication };

const emptyToNull = (value: string): string | null => (value.trim() === '' ? null : value.trim());

/**
 * Which call a step makes: step 0 creates; 1–3 update. Step 1 sends empty URLs as null;
 * step 3 omits an empty logoUrl. Step 3 repeats step 2's email settings next to the colours so the
 * stored emailPreferences are complete whether the server merges or replaces that object.
 */
export function stepCall<S extends WizardStep>(step: S, values: WizardValues): StepCall {
  switch (step) {
    case 0:
      return { kind: 'create', body: { ...values[0] } };
    case 1:
      return {
        kind: 'update',
        body: {
          privacyPolicy: emptyToNull(values[1].privacyPolicy),
          supportContact: emptyToNull(values[1].supportContact),
          appLink: emptyToNull(values[1].appLink),
        },
      };
    case 2:
      return { kind: 'update', body: { emailPreferences: { ...values[2] } } };
    default: {
      const { logoUrl, primaryColour, secondaryColour } = values[3];
      return {
        kind: 'update',
        body: {
          ...(logoUrl.trim() === '' ? {} : { logoUrl: logoUrl.trim() }),
          emailPreferences: { ...values[2], primaryColour, secondaryColour },
        },
      };
    }
  }
}

/** Back shows from step index 2 on. */
export const canGoBack = (step: WizardStep): boolean => step >= 2;

/** Leaving after step index 1 and before success warns. */
export const shouldWarnOnExit = (step: WizardStep, added: boolean): boolean => step > 1 && !added;

export const isLastStep = (step: WizardStep): boolean => step === LAST_STEP;
