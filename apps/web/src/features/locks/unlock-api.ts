import {
  certificateResponseSchema,
  operationErrors,
  type CertificateResponse,
  type Lock,
  type OperationLocation,
} from '@latchkey/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getCertifiedKey } from '../../lib/device-key';
import { indexedDbKeyStore, memoryKeyStore, type DeviceKeyStore } from '../../lib/device-key-store';
import { ApiError, request } from '../../lib/http';
import { currentUserId } from '../../lib/session';
import { base64, signOperation } from '../../lib/signed-operation';
import { checkKeyCode, requestKeyCode } from '../../lib/trust-api';
import { lockKeys } from './api';

export async function certifyKey(ephemeralKey: string): Promise<CertificateResponse> {
  const res = await request('/auth/certificate', { method: 'POST', body: { ephemeralKey } });
  return certificateResponseSchema.parse(await res.json());
}

/**
 * The code dialog: the person types the six-digit code emailed for this key; `submit` signs and checks it
 * (a refusal rejects with the server's message, and the dialog may try again), `resend` emails a new one.
 * Resolves with the certificate, or null when they cancel.
 */
export type AskKeyCode = (actions: {
  resend: () => Promise<void>;
  submit: (code: string) => Promise<CertificateResponse>;
}) => Promise<CertificateResponse | null>;

export class KeyCodeCancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'KeyCodeCancelled';
  }
}

/**
 * A password account's new key answers 423 — the platform emails a code, the person types it,
 * the key signs it (Ed25519 over the code's bytes, standard base64, as the SDKs do), and the check answers
 * the certificate. The key is then proved for good: later certificates for it need no code.
 */
export function certifyWithSecondFactor(askCode: AskKeyCode | undefined) {
  return async (ephemeralKey: string, privateKey: CryptoKey): Promise<CertificateResponse> => {
    try {
      return await certifyKey(ephemeralKey);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 423) || !askCode) throw e;
    }
    const resend = () => requestKeyCode(ephemeralKey);
    await resend();
    const submit = async (code: string) => {
      const signature = await crypto.subtle.sign('Ed25519', privateKey, new TextEncoder().encode(code));
      return checkKeyCode(base64(signature));
    };
    const certificate = await askCode({ resend, submit });
    if (!certificate) throw new KeyCodeCancelled();
    return certificate;
  };
}

/** Sends a signed operation as the platform's SDKs do: the compact JWS itself is the body. 204 on success. */
export async function executeOperation(lockId: string, jws: string): Promise<void> {
  await request(`/device/${encodeURIComponent(lockId)}/execute`, {
    method: 'POST',
    body: jws,
    contentType: 'application/jwt',
  });
}

/** The browser could not give a position for a lock that requires one (denied, unavailable or too slow). */
export class LocationUnavailableError extends Error {
  constructor() {
    super('location unavailable');
    this.name = 'LocationUnavailableError';
  }
}

export function currentLocation(): Promise<OperationLocation> {
  return new Promise((resolve, reject) => {
    if (!('geolocation' in navigator)) return reject(new LocationUnavailableError());
    navigator.geolocation.getCurrentPosition(
      ({ coords }) =>
        resolve({ latitude: coords.latitude, longitude: coords.longitude, accuracy: coords.accuracy }),
      () => reject(new LocationUnavailableError()),
      { enableHighAccuracy: true, timeout: 15_000, maximumAge: 0 },
    );
  });
}

/** Refusals that a fresh certificate for the same key can cure (e.g. the server's CA was replaced). */
const CERTIFICATE_REFUSALS: readonly string[] = [
  operationErrors.certificateExpired,
  operationErrors.certificateNotYetValid,
  operationErrors.certificateRevoked,
  operationErrors.foreignChain,
  operationErrors.x5cInvalid,
  operationErrors.issuer,
  operationErrors.caller,
];

let browserStore: DeviceKeyStore | null = null;
/** IndexedDB where the browser has it; otherwise the key lives as long as the page. */
function keyStore(): DeviceKeyStore {
  browserStore ??= typeof indexedDB === 'undefined' ? memoryKeyStore() : indexedDbKeyStore;
  return browserStore;
}

export interface UnlockDeps {
  store?: DeviceKeyStore;
  locate?: () => Promise<OperationLocation>;
  /** The code dialog, when the key needs a second factor. */
  askCode?: AskKeyCode;
  /**
   * Someone other than the portal's signed-in user (a tile's lock-user sign-in): whose key it is in the
   * store, how their key is certified and how the operation is sent, each with their own token.
   */
  as?: {
    keyOwner: string;
    certify: (ephemeralKey: string) => Promise<CertificateResponse>;
    execute: (lockId: string, jws: string) => Promise<void>;
  };
}

/**
 * A real signed unlock: this browser's key (certified by /auth/certificate on first use), a MUTATE_LOCK
 * operation without a duration (the lock's own unlock time), with the position when the lock's location
 * rule asks for one. Refused for the certificate, it registers the key again and tries once more.
 */
export async function unlockLock(
  lock: Lock,
  { store = keyStore(), locate = currentLocation, askCode, as }: UnlockDeps = {},
): Promise<void> {
  const owner = as?.keyOwner ?? currentUserId() ?? 'signed-out';
  const certify = as ? (ephemeralKey: string) => as.certify(ephemeralKey) : certifyWithSecondFactor(askCode);
  const execute = as?.execute ?? executeOperation;
  const location = lock.settings.usageRequirements.location?.enabled ? await locate() : undefined;
  const attempt = async (renew: boolean) => {
    const key = await getCertifiedKey(owner, store, certify, { renew });
    const jws = await signOperation({
      privateKey: key.privateKey,
      certificateChain: key.certificateChain,
      userId: key.userId,
      lockId: lock.id,
      operation: { type: 'MUTATE_LOCK', locked: false, ...(location && { location }) },
    });
    await execute(lock.id, jws);
  };
  try {
    await attempt(false);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 403 && CERTIFICATE_REFUSALS.includes(e.message))) throw e;
    await attempt(true);
  }
}

/**
 * The new state and log entry arrive through the live events; the lock and its log are reloaded as well,
 * accepted or refused, so the page is right even while the stream is reconnecting.
 */
export function useUnlock(deps?: UnlockDeps) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (lock: Lock) => unlockLock(lock, deps),
    onSettled: (_r, _e, lock) =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: lockKeys.detail(lock.applicationId, lock.id) }),
        queryClient.invalidateQueries({ queryKey: lockKeys.log(lock.applicationId, lock.id) }),
      ]),
  });
}
