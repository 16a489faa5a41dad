import { DEFAULT_CALL_TO_ACTION } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { canGoBack, initialWizardValues, isLastStep, shouldWarnOnExit, stepCall, type WizardValues } from './wizard-steps';

const filled: WizardValues = {
  0: { name: 'Acme Doors', companyName: 'Acme Ltd', mailingAddress: '1 Road, Town' },
  1: { privacyPolicy: 'https://acme.test/privacy', supportContact: 'mailto:help@acme.test', appLink: '' },
  2: { senderEmail: 'no-reply@acme.test', senderName: 'Acme', onlySendEssentialEmails: false, callToAction: { ...DEFAULT_CALL_TO_ACTION } },
  3: { logoUrl: '', primaryColour: '#123', secondaryColour: '#ABCDEF' },
};

describe('wizard step calls', () => {
  it('step 0 creates the application with name, company and address', () => {
    expect(stepCall(0, filled)).toEqual({
      kind: 'create',
      body: { name: 'Acme Doors', companyName: 'Acme Ltd', mailingAddress: '1 Road, Town' },
    });
  });

  it('step 1 updates the URLs and sends an empty one as null', () => {
    expect(stepCall(1, filled)).toEqual({
      kind: 'update',
      body: { privacyPolicy: 'https://acme.test/privacy', supportContact: 'mailto:help@acme.test', appLink: null },
    });
    const withLink = { ...filled, 1: { ...filled[1], appLink: 'https://apps.test/acme' } };
    expect(stepCall(1, withLink).body).toMatchObject({ appLink: 'https://apps.test/acme' });
  });

  it('step 2 updates the email preferences including the call to action', () => {
    expect(stepCall(2, filled)).toEqual({
      kind: 'update',
      body: {
        emailPreferences: {
          senderEmail: 'no-reply@acme.test',
          senderName: 'Acme',
          onlySendEssentialEmails: false,
          callToAction: DEFAULT_CALL_TO_ACTION,
        },
      },
    });
  });

  it('step 3 omits an empty logoUrl and sends the colours', () => {
    const call = stepCall(3, filled);
    expect(call.kind).toBe('update');
    expect(call.body).not.toHaveProperty('logoUrl');
    expect(call.body.emailPreferences).toMatchObject({ primaryColour: '#123', secondaryColour: '#ABCDEF' });
  });

  it('step 3 sends a logoUrl once one was uploaded', () => {
    const withLogo = { ...filled, 3: { ...filled[3], logoUrl: 'https://cdn.test/app/logo.png' } };
    expect(stepCall(3, withLogo).body).toMatchObject({ logoUrl: 'https://cdn.test/app/logo.png' });
  });

  it('starts with the default colours and no call to action', () => {
    expect(initialWizardValues[3]).toMatchObject({ primaryColour: '#00283C', secondaryColour: '#45BDD1' });
    expect(initialWizardValues[2].callToAction).toBeNull();
  });
});

describe('wizard navigation rules', () => {
  it('offers Back only from step index 2', () => {
    expect([0, 1, 2, 3].map((s) => canGoBack(s as 0))).toEqual([false, false, true, true]);
  });

  it('warns on exit only after step index 1 and before success', () => {
    expect(shouldWarnOnExit(1, false)).toBe(false);
    expect(shouldWarnOnExit(2, false)).toBe(true);
    expect(shouldWarnOnExit(3, false)).toBe(true);
    expect(shouldWarnOnExit(3, true)).toBe(false);
  });

  it('finishes on the last step', () => {
    expect(isLastStep(2)).toBe(false);
    expect(isLastStep(3)).toBe(true);
  });
});
