import * as z from 'zod/mini';
import { messages } from './messages.js';
import { emailSchema, passwordSchema, requiredText } from './rules.js';
import { checkText, text } from './text.js';

export const loginSchema = z.object({
  email: emailSchema,
  password: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(1024, messages.tooLong), checkText('secret')),
});
export type Login = z.infer<typeof loginSchema>;

export const registerSchema = z.object({
  email: emailSchema,
  password: passwordSchema,
  displayName: z.optional(text({ max: 200, min: 0 })),
});
export type Register = z.infer<typeof registerSchema>;

export const registerQuerySchema = z.object({
  force: z.pipe(
    z.optional(z.enum(['true', 'false'])),
    z.transform((v) => v === 'true'),
  ),
});

/**
 * "Passwords are not matching" on the repeat field. `when` makes zod run the check even while other
 * fields (a short password, the unticked agreement) are still invalid, so the user sees every message at once.
 */
const passwordsMatch = {
  message: messages.passwordsNotMatching,
  path: ['repeatPassword'],
  when: (payload: { value: unknown }) => {
    const v = payload.value as { password?: unknown; repeatPassword?: unknown };
    return typeof v.password === 'string' && typeof v.repeatPassword === 'string' && v.repeatPassword.length > 0;
  },
};

/** The register screen: the request plus the two screen-only fields. */
export const registerFormSchema = z
  .object({
    email: emailSchema,
    displayName: requiredText(),
    password: passwordSchema,
    repeatPassword: z.string({ error: messages.required }).check(z.minLength(1, messages.required), checkText('secret')),
    agreement: z.literal(true, { error: messages.agreementRequired }),
  })
  .check(z.refine((v) => v.password === v.repeatPassword, passwordsMatch));

/** Choosing a password after signing in with an invitation code. */
export const choosePasswordFormSchema = z
  .object({
    password: passwordSchema,
    repeatPassword: z.string({ error: messages.required }).check(z.minLength(1, messages.required), checkText('secret')),
  })
  .check(z.refine((v) => v.password === v.repeatPassword, passwordsMatch));

export const authResponseSchema = z.object({
  authToken: z.string(),
  refreshToken: z.string(),
  privateKey: z.string(),
  publicKey: z.string(),
  /** True when the account was signed in with a one-time invitation code and must choose a password. */
  passwordChangeRequired: z.optional(z.boolean()),
});
export type AuthResponse = z.infer<typeof authResponseSchema>;

export const refreshResponseSchema = z.object({
  authToken: z.string(),
  refreshToken: z.optional(z.string()),
});

export const accountSchema = z.object({
  userId: z.string(),
  email: z.string(),
  displayName: z.nullable(z.string()),
  emailVerified: z.boolean(),
  publicKey: z.nullable(z.string()),
});
export type Account = z.infer<typeof accountSchema>;

export const updateAccountSchema = z.object({
  displayName: requiredText(),
});

export const changePasswordSchema = z.object({
  oldPassword: z.string({ error: messages.required }).check(z.minLength(1, messages.required), z.maxLength(1024, messages.tooLong), checkText('secret')),
  newPassword: passwordSchema,
});
export type ChangePassword = z.infer<typeof changePasswordSchema>;

/** Claims of the portal's access token. */
export const accessTokenClaimsSchema = z.object({
  sub: z.string(),
  email: z.string(),
  sid: z.string(),
  exp: z.number(),
  iat: z.optional(z.number()),
});
export type AccessTokenClaims = z.infer<typeof accessTokenClaimsSchema>;
