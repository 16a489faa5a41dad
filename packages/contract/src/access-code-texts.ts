/**
 * Access codes (PIN codes typed at a lock's keypad): their limits and texts, apart from the schemas
 * (access-codes.ts), so the portal's string table can import the texts without building any.
 */

export const ACCESS_CODE_KINDS = ['online', 'offline'] as const;
export type AccessCodeKind = (typeof ACCESS_CODE_KINDS)[number];
/** setting: an online code the lock's device has not confirmed yet; set: the lock takes it; withdrawn: an offline code refused until its end. */
export const ACCESS_CODE_STATUSES = ['setting', 'set', 'withdrawn'] as const;
export type AccessCodeStatus = (typeof ACCESS_CODE_STATUSES)[number];

/** An online code has this many digits at least and at most; one the platform makes has ACCESS_CODE_GENERATED_DIGITS. */
export const ACCESS_CODE_MIN_DIGITS = 4;
export const ACCESS_CODE_MAX_DIGITS = 8;
export const ACCESS_CODE_GENERATED_DIGITS = 6;
/** An offline code always has this many digits, so it never equals an online one. */
export const OFFLINE_ACCESS_CODE_DIGITS = 10;
/** An offline code's window: whole hours, 1 hour to 30 days. */
export const OFFLINE_ACCESS_CODE_MIN_HOURS = 1;
export const OFFLINE_ACCESS_CODE_MAX_HOURS = 720;
export const MAX_ACCESS_CODE_NAME_LENGTH = 100;
/**
 * The codes a lock lists at most (current ones and withdrawn offline ones before their end): every one
 * travels in the device's config, which must stay within a device message (64 KiB).
 */
export const MAX_ACCESS_CODES_PER_LOCK = 200;

/** What a create body is refused for (400), in the order the checks run. */
export const accessCodeMessages = {
  nameTooLong: `A code’s name may have at most ${MAX_ACCESS_CODE_NAME_LENGTH} characters`,
  codeDigits: 'An access code may hold digits (0–9) only',
  codeLength: `An access code has ${ACCESS_CODE_MIN_DIGITS} to ${ACCESS_CODE_MAX_DIGITS} digits`,
  kind: 'kind is online or offline',
  timeNumber: 'start and end are epoch seconds (a number) or null',
  offlineCodeGiven: 'The platform computes an offline code: leave out code',
  offlineWindowRequired: 'An offline code needs a start and an end',
  offlineWholeHours: 'An offline code starts and ends on a whole hour',
  offlineWindowLength: 'An offline code holds for 1 hour to 30 days',
  endPassed: 'The end must be in the future',
  keypadDigits: `Type digits only, at most ${OFFLINE_ACCESS_CODE_DIGITS}`,
} as const;

/** What the access-code routes answer when something clashes, is not there or not allowed. */
export const accessCodeErrors = {
  clash: 'This lock already has a current code with these digits: choose other digits',
  notFound: 'Access code not found',
  tooMany: `A lock can have at most ${MAX_ACCESS_CODES_PER_LOCK} access codes`,
  notAdmin: 'Only an admin of this lock can see or change its access codes',
  noOfflineSecret: 'This lock’s device was provisioned without an offline-code secret: provision it again to give it offline codes',
  keypadNotVirtual: 'This lock has a device: type the code at the device’s keypad (only a virtual lock takes a simulated keypad)',
  offlineWindowWithdrawn: 'An offline code for this start and end was withdrawn, and the lock refuses it until its end: choose another start or end',
} as const;

/** What an ACCESS_CODE entry of a lock's log says happened (its subject is the code's name, never the code). */
export const accessCodeLogReasons = {
  createdOnline: 'Online code created',
  createdOffline: 'Offline code created',
  withdrawn: 'Code withdrawn',
} as const;
