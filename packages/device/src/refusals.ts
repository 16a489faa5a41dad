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
