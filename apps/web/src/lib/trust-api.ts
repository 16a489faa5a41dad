import {
  API_V2_ACCEPT,
  authResponseSchema,
  certificateResponseSchema,
  keyVerificationResponseSchema,
  type AuthResponse,
  type CertificateResponse,
  type PasswordResetVerify,
} from '@latchkey/contract';
import { request } from './http';

/** Forgot password, email verification, a new key's second factor — the API's calls, written once. */
export async function requestPasswordReset(email: string): Promise<void> {
  await request('/account/password/reset/initialize', { method: 'POST', body: { email }, auth: false });
}

export async function resetPassword(body: PasswordResetVerify): Promise<AuthResponse> {
  const res = await request('/account/password/reset/verify', { method: 'POST', body, auth: false, accept: API_V2_ACCEPT });
  return authResponseSchema.parse(await res.json());
}

export async function verifyEmail(code: string): Promise<void> {
  // In the body, never the URL: a URL is what server and proxy logs record.
  await request('/account/email/verify', { method: 'PUT', body: { code }, auth: false });
}

export async function resendVerification(): Promise<void> {
  await request('/account/email/reverify', { method: 'POST' });
}

/** Emails a six-digit code for `ephemeralKey` (after a 423 from /auth/certificate). */
export async function requestKeyCode(ephemeralKey: string): Promise<void> {
  const res = await request('/auth/certificate/verify?method=EMAIL', { method: 'POST', body: { ephemeralKey } });
  keyVerificationResponseSchema.parse(await res.json());
}

/** The code signed with the new key's private key, standard base64 → the certificate chain. */
export async function checkKeyCode(verificationSignature: string): Promise<CertificateResponse> {
  const res = await request('/auth/certificate/check', { method: 'POST', body: { verificationSignature } });
  return certificateResponseSchema.parse(await res.json());
}
