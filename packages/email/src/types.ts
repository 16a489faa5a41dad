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

/** An invitation to the platform: the one-time code doubles as the first password. */
export interface InvitationMessage {
  kind: 'invitation';
  inviteUrl: string;
  code: string;
  recipientEmail?: string;
  inviterName?: string | null;
}

/**
 * The sample shown by the preview and the branding test email: the share email as the application's users
 * would get it, with a sample door; its button only when the application has an app link, as sent.
 */
export interface SampleMessage {
  kind: 'sample';
  recipientName?: string;
  /** The shared lock's name; without it the text speaks of "a door". */
  lockName?: string;
}

/**
 * A lock shared with someone who has no account in the application yet: the sample's key
 * email with the real lock and sharer, the accept link and when the invitation stops being accepted.
 */
export interface KeyShareMessage {
  kind: 'keyShare';
  lockName: string;
  /** Who shared it; defaults to the application's sender name like the sample. */
  sharedBy?: string | null;
  recipientName?: string | null;
  /** Where the invitee accepts the key (the application's app link); no button without one. */
  acceptUrl?: string | null;
  /** When the invitation expires; null = it does not. */
  expiresAt?: Date | null;
}

/** Any other notice: a heading, paragraphs and an optional button. */
export interface NoticeMessage {
  kind: 'notice';
  subject: string;
  heading: string;
  paragraphs: string[];
  action?: { text: string; url: string };
  /** A one-time code shown on its own line (a key's verification code). */
  code?: string;
}

export type EmailMessage = InvitationMessage | SampleMessage | KeyShareMessage | NoticeMessage;

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}
