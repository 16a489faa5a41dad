import type { OperationErrorKey } from '@latchkey/contract';

/** What only a lock answers (its texts are in @latchkey/contract, with the platform's). */
export { deviceRefusals } from '@latchkey/contract';

/** What only a device answers about its own state. */
export const lockRefusals = {
  /** The config's grace has passed: signed operations are refused until a newer config arrives. */
  configLapsed: (issuedAtS: number) =>
    `The lock has not heard from the platform since ${new Date(issuedAtS * 1000).toISOString()}: it refuses signed operations until it gets a new configuration (access codes still work)`,
} as const;

/** As the platform answers: an operation that is not well-formed is 400; every other refusal is the lock's decision, 403. */
const MALFORMED: ReadonlySet<OperationErrorKey> = new Set<OperationErrorKey>([
  'malformed',
  'headerInvalid',
  'algorithm',
  'type',
  'x5cMissing',
  'x5cInvalid',
  'claimsInvalid',
  'timesMissing',
  'jti',
  'unknownOperation',
  'operationInvalid',
]);

/** Whether a refusal, by its reason's catalogue key, says the input was not a well-formed operation (not a decision worth reporting). */
export const isMalformed = (reasonKey: OperationErrorKey | undefined) => reasonKey !== undefined && MALFORMED.has(reasonKey);
