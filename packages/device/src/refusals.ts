import { operationErrors } from '@latchkey/contract';

/** What only a lock answers (its texts are in @latchkey/contract, with the platform's). */
export { deviceRefusals } from '@latchkey/contract';

/** What only a device answers about its own state. */
export const lockRefusals = {
  /** The config's grace has passed: signed operations are refused until a newer config arrives. */
  configLapsed: (issuedAtS: number) =>
    `The lock has not heard from the platform since ${new Date(issuedAtS * 1000).toISOString()}: it refuses signed operations until it gets a new configuration (access codes still work)`,
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
