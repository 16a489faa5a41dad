import * as z from 'zod/mini';

/** The one error body of the API: `{ code, message }`, plus `errors` for validation failures. */
export const errorBodySchema = z.object({
  code: z.number(),
  message: z.string(),
  errors: z.optional(z.array(z.object({ path: z.string(), message: z.string() }))),
  /**
   * What would let it through, from a service running with its development defaults — a URL the
   * outbound guard refused (plain http, a loopback or private address) names the host OUTBOUND_ALLOW takes.
   */
  hint: z.optional(z.object({ outboundAllow: z.string() })),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
export type ErrorHint = NonNullable<ErrorBody['hint']>;

/** Login and registration failures, by HTTP status (0 = no response at all). */
export interface AuthErrorEntry {
  title: string;
  message: string;
}
export function authErrorFor(status: number): AuthErrorEntry {
  if (status === 0 || status === 500) return { title: 'No internet connection', message: 'Please try again.' };
  if (status === 401 || status === 403) return { title: 'Wrong credentials', message: 'Please check your email and password and try again.' };
  if (status === 409) return { title: 'Account already exists', message: 'Please log in with this email address instead.' };
  if (status === 422)
    return {
      title: 'You have a pending Invite',
      message:
        'Please click on the Accept Key button in the invitation email you previously received to create your account.',
    };
  if (status === 429) return { title: 'Too many attempts', message: 'Please wait a moment and try again.' };
  return { title: 'Something went wrong', message: 'Please try again.' };
}

/** Other failure texts the portal shows (owners, logo upload, activation link). */
export const uiErrors = {
  ownerNotFound: 'The user with that email address has not been found',
  ownerAddFailed: 'Unable to add the owner. Please try again.',
  ownerRemoveFailed: 'Unable to remove the owner. Please try again.',
  logoUploadTitle: 'Try again',
  logoUploadMessage: 'something went wrong',
  failedTitle: 'Failed',
  activationLinkExpired: 'This activation link has expired. Please ask the admin to reshare the lock.',
} as const;
