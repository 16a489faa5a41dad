import { DEFAULT_CALL_TO_ACTION } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { toggleCallToAction } from './call-to-action';
import { emailPreviewSrc } from './email-preview-query';

const custom = { headline: 'Questions?', actionText: 'Get Help', actionTarget: 'https://help.test' };

describe('call-to-action toggle', () => {
  it('off stores the current one aside and clears it', () => {
    expect(toggleCallToAction(false, custom, null)).toEqual({ next: null, stored: custom });
  });

  it('on restores the stored one', () => {
    expect(toggleCallToAction(true, null, custom)).toEqual({ next: custom, stored: null });
  });

  it('on without a stored one uses the default words, leading to the application’s own support contact', () => {
    expect(toggleCallToAction(true, null, null, 'mailto:help@acme.test').next).toEqual({
      headline: DEFAULT_CALL_TO_ACTION.headline,
      actionText: DEFAULT_CALL_TO_ACTION.actionText,
      actionTarget: 'mailto:help@acme.test',
    });
    // Never Latchkey's own support page in an application's emails: without a contact the owner fills it in.
    expect(toggleCallToAction(true, null, null).next?.actionTarget).toBe('');
    expect(toggleCallToAction(true, null, null, 'https://acme.test/help').next?.actionTarget).not.toContain('latchkey');
  });
});

describe('email preview src', () => {
  it('passes the call to action and colours, omitting empty ones', () => {
    const src = emailPreviewSrc('app-1', { callToAction: custom, primaryColour: '#112233', secondaryColour: '' });
    const url = new URL(src, 'http://x');
    expect(url.pathname).toBe('/api/email/preview/app-1');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      ctaHeadline: 'Questions?',
      ctaAbridged: 'Get Help',
      ctaTarget: 'https://help.test',
      primaryColour: '#112233',
    });
    expect(emailPreviewSrc('app-1', {})).toBe('/api/email/preview/app-1');
  });

  it('passes the unsaved sender name, the essentials choice and a call to action switched off', () => {
    const url = new URL(emailPreviewSrc('app-1', { callToAction: null, senderName: ' Night Shift ', onlySendEssentialEmails: false }), 'http://x');
    expect(Object.fromEntries(url.searchParams)).toEqual({ cta: 'none', senderName: 'Night Shift', onlySendEssentialEmails: 'false' });
  });
});
