import {
  accountErrors,
  apiErrors,
  passkeyErrors,
  authErrorFor,
  discoveryErrors,
  testEmailErrors,
  lockErrors,
  lockMessages,
  messages,
  operationErrors,
  outboundErrors,
  platformUserErrors,
  siteErrors,
  tileErrors,
  uiErrors,
  webhookErrors,
} from '@latchkey/contract';

/**
 * The contract's texts (validation messages, API errors, spec §8 failures) as the portal shows them, in
 * English: the contract's own values. lib/server-text.ts finds a text a schema or the server produced here
 * and shows the current language's version (contract-de.ts).
 */
export const contractEn = {
  messages,
  apiErrors,
  uiErrors,
  platformUserErrors,
  lockMessages,
  lockErrors,
  operationErrors,
  outboundErrors,
  discoveryErrors,
  testEmailErrors,
  webhookErrors,
  accountErrors,
  passkeyErrors,
  tileErrors,
  siteErrors,
  // The contract's deviceErrors, word for word (i18n-parity.test.ts compares them): importing them would
  // bring the module that builds the device's payloads with zod's full build into every page's chunk.
  deviceErrors: {
    offline: 'The lock is offline',
    noAnswer: 'The lock did not answer',
    noDevice: 'This lock has no device',
    codeInvalid: 'This provisioning code is unknown, used or expired: make a new one on the lock’s page',
    csrInvalid: 'The certificate request is not a PKCS#10 PEM signed by its own ECDSA P-256 or Ed25519 key',
    csrSubject: 'The certificate request must name no subject, or CN=<deviceId>',
  },
  authErrors: {
    offline: authErrorFor(0),
    wrongCredentials: authErrorFor(401),
    accountExists: authErrorFor(409),
    pendingInvite: authErrorFor(422),
    tooManyAttempts: authErrorFor(429),
    other: authErrorFor(418),
  },
} as const;
