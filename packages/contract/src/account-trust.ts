import * as z from 'zod/mini';
import { messages } from './messages.js';
import { emailSchema, passwordSchema } from './rules.js';
import { checkText } from './text.js';

/**
 * Accounts people can trust: password reset by email, email verification, a second factor
 * before a new key is certified for a password account. Paths and bodies as the platform's SDKs send them
 * (doordeck-headless-sdk Paths.kt / AccountlessClient / AccountClient; doordeck-sdk-javascript certificate.js).
 */

/** Minutes a password-reset link lives. */
export const PASSWORD_RESET_TTL_MINUTES = 30;
/** Hours an email-verification link lives. */
export const EMAIL_VERIFICATION_TTL_HOURS = 72;
/** Minutes a six-digit key-verification code lives, and the wrong tries it takes. */
export const KEY_CODE_TTL_MINUTES = 10;
export const KEY_CODE_MAX_ATTEMPTS = 5;
/** Emails the platform sends for an account whose address is not verified yet, per day. */
export const UNVERIFIED_EMAIL_LIMIT = { max: 5, windowSeconds: 86_400 } as const;
/**
 * Invitations and key emails the platform sends to people on one application's behalf, per hour, whoever
 * asks for them (its owners in the portal, its admins through the SDKs).
 */
export const APPLICATION_EMAIL_LIMIT = { max: 20, windowSeconds: 3_600 } as const;
/** Invitations to the portal (POST /account/invite) one account sends, per hour. */
export const ACCOUNT_INVITATION_LIMIT = { max: 10, windowSeconds: 3_600 } as const;

/** Why the platform did not send an email someone asked for (429, or 403 for an invitation only an admin may send). */
export const emailLimitErrors = {
  applicationUnverified: `No owner of this application has verified their email address: until one does, the platform sends at most ${UNVERIFIED_EMAIL_LIMIT.max} emails a day for it.`,
  applicationHourly: `This application has sent as many invitations and key emails as it may in an hour (${APPLICATION_EMAIL_LIMIT.max}). Try again later.`,
  accountInvitations: `You have sent as many invitations as you may in an hour (${ACCOUNT_INVITATION_LIMIT.max}). Try again later.`,
  inviteNeedsAdmin: 'Only an admin of a lock can invite someone new. Ask an admin of the lock to share it with them.',
} as const;

/** A secret from an emailed link: base64url, bounded. */
const linkSecret = () =>
  z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(200, messages.tooLong), z.regex(/^[A-Za-z0-9_-]+$/, 'Not a valid link'));

export const passwordResetInitializeSchema = z.object({ email: emailSchema });

export const passwordResetVerifySchema = z.object({
  userId: z.uuid({ error: 'Not a valid user id' }),
  token: linkSecret(),
  password: passwordSchema,
});
export type PasswordResetVerify = z.infer<typeof passwordResetVerifySchema>;

/**
 * PUT /account/email/verify: the emailed code in the body `{code}` (the portal: a body is never logged) or,
 * as the platform's SDKs send it, in the query (`?code=`; logs and traces redact query values). One of the two.
 */
export const verifyEmailQuerySchema = z.object({ code: z.optional(linkSecret()) });
export const verifyEmailBodySchema = z.optional(z.nullable(z.object({ code: z.optional(linkSecret()) })));

/** `?method=EMAIL` (the headless SDK may send it; the JavaScript SDK sends none: EMAIL is the one method). */
export const keyVerificationQuerySchema = z.object({ method: z.optional(z.enum(['EMAIL'], { error: 'Only EMAIL is offered' })) });
export const keyVerificationResponseSchema = z.object({ method: z.literal('EMAIL') });
export const keyVerificationCheckSchema = z.object({
  verificationSignature: z.string({ error: messages.required }).check(
    z.minLength(1, messages.required),
    z.maxLength(200, messages.tooLong),
    checkText('secret'),
  ),
});

/** The portal's screens. */
export const forgotPasswordFormSchema = z.object({ email: emailSchema });
export const resetPasswordFormSchema = z
  .object({
    password: passwordSchema,
    repeatPassword: z.string({ error: messages.required }).check(z.minLength(1, messages.required), checkText('secret')),
  })
  .check(
    z.refine((v) => v.password === v.repeatPassword, {
      message: messages.passwordsNotMatching,
      path: ['repeatPassword'],
      when: (payload: { value: unknown }) => {
        const v = payload.value as { password?: unknown; repeatPassword?: unknown };
        return typeof v.password === 'string' && typeof v.repeatPassword === 'string' && v.repeatPassword.length > 0;
      },
    }),
  );

/** One session of the signed-in account (the account page's list). Times in epoch seconds. */
export const accountSessionSchema = z.object({
  id: z.string(),
  userAgent: z.nullable(z.string()),
  createdAt: z.number(),
  lastUsedAt: z.number(),
  current: z.boolean(),
  passkey: z.boolean(),
});
export type AccountSession = z.infer<typeof accountSessionSchema>;
export const accountSessionParamsSchema = z.object({ sessionId: z.uuid({ error: 'Not a valid session id' }) });

/** Texts the account-trust routes answer with (the portal shows them, and translates them). */
export const accountErrors = {
  lastOwner:
    'You are the last owner of an application. Add another owner to it or remove it before you delete your account.',
  sessionNotFound: 'No such session of yours',
  /** How the history names someone whose account was deleted. */
  deletedUser: 'Deleted user',
  resetLinkInvalid: 'This password reset link is not valid. Ask for a new one.',
  resetLinkUsed: 'This password reset link has already been used. Ask for a new one.',
  resetLinkExpired: 'This password reset link has expired. Ask for a new one.',
  verifyLinkInvalid: 'This verification link is not valid, was already used or has expired. Send a new one from the portal.',
  verifyCodeMissing: 'The verification code is missing: send it as {"code": …} in the body (or ?code= in the URL).',
  unverifiedSendLimit:
    'Verify your email address to send more emails: until then the platform sends at most 5 emails a day for your account.',
  secondFactorRequired:
    'A new key needs a second factor: ask for a code (POST /auth/certificate/verify) and send it signed with the key (POST /auth/certificate/check).',
  secondFactorNotNeeded: 'Keys of application users need no code: register them with POST /auth/certificate.',
  codeNotPending: 'No code is waiting for a key of yours. Ask for a new code.',
  codeExpired: 'This code has expired. Ask for a new code.',
  codeWrong: 'The code is not correct, or was not signed with the new key.',
  codeTooManyTries: 'Too many wrong codes. Ask for a new code.',
} as const;

// ---------------------------------------------------------------------------------------------------------
// Passkeys (WebAuthn)

const b64url = (max = 4096) => z.string().check(z.minLength(1, messages.required), z.maxLength(max, messages.tooLong), z.regex(/^[A-Za-z0-9_-]*$/, 'Not base64url'));

/** What navigator.credentials returns, as @simplewebauthn/browser serialises it (bounded, base64url). */
export const passkeyResponseSchema = z.object({
  id: b64url(1024),
  rawId: b64url(1024),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: b64url(),
    attestationObject: z.optional(b64url(16_384)),
    authenticatorData: z.optional(b64url()),
    signature: z.optional(b64url()),
    userHandle: z.optional(z.nullable(b64url(1024))),
    transports: z.optional(z.array(z.string().check(z.maxLength(40, messages.tooLong), checkText()))),
    publicKey: z.optional(b64url()),
    publicKeyAlgorithm: z.optional(z.number()),
  }),
  authenticatorAttachment: z.optional(z.nullable(z.string().check(z.maxLength(40, messages.tooLong), checkText()))),
  clientExtensionResults: z.optional(z.record(z.string(), z.unknown())),
});
export type PasskeyResponse = z.infer<typeof passkeyResponseSchema>;

export const passkeyRegisterSchema = z.object({
  response: passkeyResponseSchema,
  name: z.optional(z.string().check(z.maxLength(100, messages.tooLong), checkText())),
});
export const passkeySignInSchema = z.object({ response: passkeyResponseSchema });
/**
 * Asking for the options to add a passkey: a session that signed in with a passkey needs nothing more; any
 * other needs the six-digit code emailed to the account (asked for without one: 423, and the code is sent).
 */
export const passkeyOptionsRequestSchema = z.optional(
  z.nullable(z.object({ code: z.optional(z.string({ error: messages.required }).check(z.regex(/^\d{6}$/, 'Enter the six-digit code from the email'))) })),
);

export const passkeySchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.number(),
  lastUsedAt: z.nullable(z.number()),
});
export type Passkey = z.infer<typeof passkeySchema>;
export const passkeyParamsSchema = z.object({ passkeyId: z.string().check(z.maxLength(1024, messages.tooLong), z.regex(/^[A-Za-z0-9_-]+$/, 'Not a passkey id')) });

/** The options the browser's WebAuthn call takes (opaque to the contract: the server library writes them). */
export const passkeyOptionsSchema = z.record(z.string(), z.unknown());

export const passkeyErrors = {
  invalid: 'This passkey could not be verified. Try again.',
  unknown: 'This passkey is not registered with any account.',
  challengeUsed: 'This passkey sign-in has expired or was already used. Try again.',
  notFound: 'No such passkey of yours',
  exists: 'This passkey is already registered',
  codeSent:
    'Adding a passkey needs a second factor: we emailed you a six-digit code. Ask for the options again with it (POST /account/passkeys/options {code}).',
  codeNotPending: 'No code is waiting for a new passkey of yours. Ask for a new code.',
  codeWrong: 'The code is not correct.',
} as const;
