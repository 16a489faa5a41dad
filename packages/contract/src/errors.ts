import * as z from 'zod/mini';

/** The one error body of the API: `{ code, message }`, plus `errors` for validation failures. */
export const errorBodySchema = z.object({
  code: z.number(),
  message: z.string(),
  errors: z.optional(z.array(z.object({ path: z.string(), message: z.string() }))),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Texts the API answers with. The portal shows them verbatim in its 'Failed' dialogs. */
export const apiErrors = {
  validation: 'The request is not valid',
  unauthorized: 'You need to sign in',
  wrongCredentials: 'Wrong email or password',
  accountExists: 'An account with this email address already exists',
  pendingInvite: 'This email address has a pending invitation',
  tooManyAttempts: 'Too many attempts. Please wait and try again.',
  refreshReused: 'This session has ended. Please sign in again.',
  wrongOldPassword: 'The current password is not correct',
  notFound: 'Not found',
  applicationNotFound: 'Application not found',
  userNotFound: 'The user with that email address has not been found',
  ownerExists: 'This user is already an owner',
  lastOwner: 'The last owner of an application cannot be removed',
  ownerNotFound: 'This user is not an owner of the application',
  keyExists: 'A key with this kid already exists on this application',
  keyNotFound: 'No key with this kid',
  tooManyKeys: 'This application has too many keys',
  issuerTaken: 'This auth domain is already registered by an application',
  issuerNotFound: 'This auth domain is not registered on this application',
  corsExists: 'This CORS domain is already registered on this application',
  corsNotFound: 'This CORS domain is not registered on this application',
  corsOriginNotAllowed: 'This origin is not a registered CORS domain of any application',
  tooManyDomains: 'This application has too many domains',
  logoUrlNotAllowed: 'The logo must be uploaded through the portal',
  uploadUrlInvalid: 'This upload link is not valid or has expired',
  uploadTooBig: 'Your file is too big! Please select an image under 1MB',
  uploadNotImage: 'The file is not a valid JPEG or PNG image',
  uploadTooManyPixels: 'The image is too large. Please select one under 25 megapixels',
  uploadTypeMismatch: 'The file content does not match its declared type',
  uploadTypeNotSigned: 'The file type does not match the type this upload link was made for',
  payloadTooLarge: 'The request is too large',
  unsupportedMediaType: 'Unsupported content type',
  serviceUnavailable: 'The service is temporarily unavailable. Please try again.',
  internal: 'Something went wrong. Please try again.',
} as const;

/** Spec §8: login and registration failures, by HTTP status (0 = no response at all). */
export interface AuthErrorEntry {
  title: string;
  message: string;
}
export const AUTH_ERROR_SUBTITLE = 'try again';
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

/** Other failure texts of spec §8 (owners, logo upload, activation link). */
export const uiErrors = {
  ownerNotFound: 'The user with that email address has not been found',
  ownerAddFailed: 'Unable to add the owner. Please try again.',
  ownerRemoveFailed: 'Unable to remove the owner. Please try again.',
  logoUploadTitle: 'Try again',
  logoUploadMessage: 'something went wrong',
  failedTitle: 'Failed',
  activationLinkExpired: 'This activation link has expired. Please ask the admin to reshare the lock.',
} as const;
