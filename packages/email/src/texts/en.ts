/**
 * The words of every email, in English. One entry per message kind (a new email type adds its own
 * entry here and in each other language); the model fills in names and leaves out what is missing.
 */
export const en = {
  invitation: {
    subject: (app: string) => `You're invited to ${app}`,
    heading: (app: string) => `Welcome to ${app}`,
    intro: (app: string, inviter: string | null) =>
      inviter
        ? `${inviter} has invited you to ${app}. Accept the invitation to create your account.`
        : `You have been invited to ${app}. Accept the invitation to create your account.`,
    codeHint:
      'If the button does not work, sign in with your email address and this one-time code as the password, then choose your own password:',
    // The label the portal's pending-invite message points the invitee to.
    action: 'Accept Key',
  },
  sample: {
    subject: (sender: string | null, app: string) => (sender ? `${sender} has shared a key with you` : `You have a new key for ${app}`),
    heading: (recipient: string | null) => (recipient ? `Hi ${recipient}, you have a new key` : 'You have a new key'),
    given: (sender: string | null, lock: string | null) => {
      const door = lock ? `the door “${lock}”` : 'a door';
      return sender ? `${sender} has given you access to ${door}.` : `You have been given access to ${door}.`;
    },
    howTo: (app: string) => `Accept the key in the ${app} app on your phone, then unlock the door when you arrive.`,
    action: 'Accept Key',
  },
  keyShare: {
    // The rest of the email is the sample's: the share invitation is the email the branding card shows.
    // Who to ask afterwards is who shared it, by name when the email has one.
    expires: (when: string, sender: string | null) =>
      `This invitation expires on ${when}. If you need it after that, ask ${sender ?? 'the person who shared it with you'} to share the door again.`,
  },
  footer: {
    privacy: 'Privacy policy',
    support: 'Contact support',
    essentials: (app: string) => `You receive this email because it is essential to your use of ${app}. We only send essential emails.`,
  },
};

export type EmailTexts = typeof en;
