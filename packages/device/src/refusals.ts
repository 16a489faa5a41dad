import { operationErrors } from '@latchkey/contract';

/**
 * What only a lock answers; every other refusal is the platform's own text (`operationErrors` in
 * @latchkey/contract), so a user reads the same reason whether the platform or the lock refused.
 */
export const deviceRefusals = {
  noConfig: 'The lock has no configuration from the platform yet',
  actuatorFailed: 'The lock did not move: its actuator failed',
  configMalformed: 'The configuration is not a compact JWS: three base64 or base64url parts separated by dots',
  configInvalid: 'The configuration payload is not a valid lock configuration',
  configChain: 'The configuration is not signed by the Latchkey platform CA',
  configSignature: 'The configuration signature does not match its certificate',
  configLock: 'The configuration is for another lock',
  configOlder: 'The configuration is older than the one the lock holds',
} as const;

/** As the platform answers: an operation that is not well-formed is 400; every other refusal is the lock's decision, 403. */
const MALFORMED: readonly string[] = [
  operationErrors.malformed,
  operationErrors.headerInvalid,
  operationErrors.algorithm,
  operationErrors.type,
  operationErrors.x5cMissing,
  operationErrors.x5cInvalid,
  operationErrors.claimsInvalid,
  operationErrors.timesMissing,
  operationErrors.jti,
  operationErrors.unknownOperation,
  operationErrors.operationInvalid,
];

/** Whether a refusal says the input was not a well-formed operation (not a decision worth reporting). */
export const isMalformed = (reason: string) => MALFORMED.some((text) => reason === text || reason.startsWith(`${text}:`));
