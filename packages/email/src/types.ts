import type { CallToAction } from '@latchkey/contract';

/** What the email takes from an application (the stored Application fits it as is). */
export interface EmailBranding {
  name: string;
  logoUrl: string | null;
  companyName: string;
  mailingAddress: string;
  privacyPolicy: string | null;
  supportContact: string | null;
  /** Where the application's own app lives; the sample's button points there. */
  appLink?: string | null;
  emailPreferences: {
    senderName?: string | null;
    senderEmail?: string | null;
    primaryColour: string;
    secondaryColour: string;
    onlySendEssentialEmails: boolean;
    callToAction: CallToAction | null;
  };
}

/** An invitation to the platform: the one-time code doubles as the first password (spec §4). */
export interface InvitationMessage {
  kind: 'invitation';
  inviteUrl: string;
  code: string;
  recipientEmail?: string;
  inviterName?: string | null;
}

/** The sample shown by the preview: a key shared with someone, as the application's users would get it. */
export interface SampleMessage {
  kind: 'sample';
  recipientName?: string;
}

/** Any other notice: a heading, paragraphs and an optional button. */
export interface NoticeMessage {
  kind: 'notice';
  subject: string;
  heading: string;
  paragraphs: string[];
  action?: { text: string; url: string };
}

export type EmailMessage = InvitationMessage | SampleMessage | NoticeMessage;

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}
