import {
  accessCodeErrors,
  accessCodeLogReasons,
  accessCodeMessages,
  accountErrors,
  apiErrors,
  deviceErrors,
  passkeyErrors,
  authErrorFor,
  discoveryErrors,
  emailLimitErrors,
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
 * The contract's texts (validation messages, API errors, login and registration failures) as the portal shows them, in
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
  deviceErrors,
  emailLimitErrors,
  accessCodeMessages,
  accessCodeErrors,
  accessCodeLogReasons,
  authErrors: {
    offline: authErrorFor(0),
    wrongCredentials: authErrorFor(401),
    accountExists: authErrorFor(409),
    pendingInvite: authErrorFor(422),
    tooManyAttempts: authErrorFor(429),
    other: authErrorFor(418),
  },
} as const;
