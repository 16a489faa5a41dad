import {
  API_V2_ACCEPT,
  accountSchema,
  authResponseSchema,
  type Account,
  type AuthResponse,
  type ChangePassword,
  type Login,
  type Register,
} from '@latchkey/contract';
import { ApiError, request } from '../../lib/http';
import { setSessionValue, storeSignIn } from '../../lib/session';

export async function login(body: Login): Promise<AuthResponse> {
  const res = await request('/auth/token', { method: 'POST', body, auth: false, accept: API_V2_ACCEPT });
  return authResponseSchema.parse(await res.json());
}

export async function register(body: Register): Promise<AuthResponse> {
  const res = await request('/auth/register', { method: 'POST', body, auth: false, accept: API_V2_ACCEPT });
  return authResponseSchema.parse(await res.json());
}

export async function changePassword(body: ChangePassword): Promise<void> {
  await request('/account/password', { method: 'POST', body });
}

export async function getAccount(): Promise<Account> {
  const res = await request('/account');
  return accountSchema.parse(await res.json());
}

/** Stores a successful sign-in, then the display name from the account (best effort: the toolbar falls back to email). */
export async function completeSignIn(auth: AuthResponse, displayName?: string): Promise<void> {
  storeSignIn(auth);
  if (displayName) {
    setSessionValue('displayName', displayName);
    return;
  }
  try {
    const account = await getAccount();
    setSessionValue('displayName', account.displayName);
  } catch {
    // The session is valid without it.
  }
}

/**
 * Account creation from an invitation link: sign in with the emailed code, change the
 * password from the code to the chosen one, then sign in again with the new password.
 */
/** The invitation's code no longer signs in: it was used already, or it has expired. */
export class InvitationLinkSpent extends Error {}

export async function acceptInvitation(email: string, code: string, password: string, alreadySignedIn = false): Promise<void> {
  // The code works once: after a code sign-in on the login screen the session already exists.
  if (!alreadySignedIn) {
    try {
      storeSignIn(await login({ email, password: code }));
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) throw new InvitationLinkSpent();
      throw e;
    }
  }
  await changePassword({ oldPassword: code, newPassword: password });
  await completeSignIn(await login({ email, password }));
}
