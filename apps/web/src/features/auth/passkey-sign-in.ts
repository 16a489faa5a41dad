import { API_V2_ACCEPT, authResponseSchema, type AuthResponse, type PasskeyResponse } from '@latchkey/contract';
import { startAuthentication } from '@simplewebauthn/browser';
import { request } from '../../lib/http';

/**
 * Sign in with a passkey: options from the service, the browser's WebAuthn ceremony, the answer
 * verified by the service. Loaded only when someone presses the button, so /login stays small.
 */
export async function signInWithPasskey(): Promise<AuthResponse> {
  const options = await (await request('/auth/passkey/options', { method: 'POST', auth: false })).json();
  const response = await startAuthentication({ optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'] });
  const res = await request('/auth/passkey', { method: 'POST', body: { response: response as unknown as PasskeyResponse }, auth: false, accept: API_V2_ACCEPT });
  return authResponseSchema.parse(await res.json());
}
