import { DEFAULT_PRIMARY_COLOUR, DEFAULT_SECONDARY_COLOUR } from '@latchkey/contract';
import type { EmailBranding } from './types.js';

/** Latchkey's own branding, for mail the portal sends in its own name (invitations to the portal). */
export function portalBranding(options: { privacyPolicy: string; supportContact?: string | null; name?: string }): EmailBranding {
  return {
    name: options.name ?? 'Latchkey',
    logoUrl: null,
    companyName: 'Latchkey',
    mailingAddress: '',
    privacyPolicy: options.privacyPolicy,
    supportContact: options.supportContact ?? null,
    emailPreferences: {
      senderName: options.name ?? 'Latchkey',
      primaryColour: DEFAULT_PRIMARY_COLOUR,
      secondaryColour: DEFAULT_SECONDARY_COLOUR,
      onlySendEssentialEmails: true,
      callToAction: null,
    },
  };
}
