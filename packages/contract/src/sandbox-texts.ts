/**
 * The sandbox's texts and the limits they name, apart from the lock and operation schemas (locks.ts,
 * operations.ts): the portal's string table imports the texts, and a module's schemas are built wherever
 * any of its exports is used (see token-checks.ts), which put them all on /login.
 */
export const LOCK_UNLOCK_TIME_MIN_S = 1;
export const LOCK_UNLOCK_TIME_MAX_S = 60;
export const MAX_LOCKS_PER_APPLICATION = 50;
export const LOCK_LOG_MAX_PAGE_SIZE = 100;
/** A signed operation may be valid for at most this long (exp − nbf, or exp − iat without nbf). */
export const OPERATION_MAX_LIFETIME_S = 60;
export const MAX_JTI_LENGTH = 200;
export const OPERATION_TYPES = ['MUTATE_LOCK', 'ADD_USER', 'BATCH_ADD_USER', 'REMOVE_USER', 'MUTATE_SETTING'] as const;

export const lockMessages = {
  minimumOneDay: 'Select minimum 1 day',
  selectLock: 'Please select a lock',
  invalidTime: 'Use a 24-hour time such as 08:30',
  invalidTimeZone: 'Not a known time zone (use an IANA name such as Europe/London)',
  unlockTimeRange: `The unlock time must be between ${LOCK_UNLOCK_TIME_MIN_S} and ${LOCK_UNLOCK_TIME_MAX_S} seconds`,
  offlineGraceRange: 'The offline grace must be a whole number of seconds from 60 (1 minute) to 2592000 (30 days)',
  latitudeRange: 'The latitude must be between -90 and 90',
  longitudeRange: 'The longitude must be between -180 and 180',
  radiusRange: 'The radius must be between 1 and 100000 metres',
  endBeforeStart: 'The end must be after the start',
  emailOrUser: 'Give either an email address or a user id',
  invalidCursor: 'This page link is not valid; load the log again from the start',
  timeBoundNumber: 'start and end are epoch seconds (a number)',
  pageSizeRange: `pageSize must be a whole number from 1 to ${LOCK_LOG_MAX_PAGE_SIZE}`,
} as const;

/** What the sandbox's owner routes answer when something is not there or not allowed. */
export const lockErrors = {
  lockNotFound: 'Lock not found',
  tooManyLocks: `An application can have at most ${MAX_LOCKS_PER_APPLICATION} locks`,
  shareNotFound: 'This user has no share of this lock',
  userNotFound: 'No user with this id in this application',
  outboxEmailNotFound: 'Email not found',
} as const;

/** Why a certificate request or an operation was refused: the API answers these, and logs them as the reason. */
export const operationErrors = {
  ephemeralKeyInvalid: 'ephemeralKey must be an Ed25519 public key in base64: the raw 32 bytes or DER SPKI',
  ephemeralKeyWeak: 'ephemeralKey is a weak Ed25519 key (a small-order or non-canonical point) that no one holds a private key for: generate a fresh key pair',
  ephemeralKeyReserved: 'ephemeralKey is a key the platform itself signs with: generate your own key pair',
  certificateKeyWeak: 'The certificate is for a weak Ed25519 key (a small-order point); register a fresh key at /auth/certificate',
  lockNotFound: lockErrors.lockNotFound,
  notAdmin: 'Only an admin of this lock can see its log',
  malformed: 'The operation is not a compact JWS: three base64 or base64url parts separated by dots',
  headerInvalid: 'The operation header is not a JSON object',
  algorithm: 'Operations must be signed with EdDSA (Ed25519); other algorithms are refused',
  type: 'The operation header type (typ) must be JWT',
  x5cMissing: 'The operation header has no certificate chain (x5c) from /auth/certificate',
  x5cInvalid: 'The certificate chain (x5c) must be base64 DER X.509 certificates, leaf first',
  foreignChain: 'The certificate chain does not end at the Latchkey platform CA',
  certificateExpired: 'The certificate has expired; register the key again at /auth/certificate',
  certificateNotYetValid: 'The certificate is not valid yet',
  certificateRevoked: 'The certificate predates a password reset or change that ended the earlier keys; register the key again at /auth/certificate',
  signature: 'The operation signature does not match the key of the certificate',
  claimsInvalid: 'The operation claims are not a JSON object',
  issuer: 'The operation issuer (iss) is not the user the certificate was issued to',
  caller: 'The operation was signed by another user than the one signed in',
  subject: 'The operation subject (sub) is not this lock',
  timesMissing: 'The operation needs exp and nbf or iat, in epoch seconds',
  notYetValid: 'The operation is not valid yet (nbf or iat is in the future)',
  expired: 'The operation has expired (exp)',
  lifetime: `An operation may be valid for at most ${OPERATION_MAX_LIFETIME_S} seconds`,
  jti: `jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`,
  replayed: 'This operation has already been used',
  unknownOperation: `Unknown operation: use one of ${OPERATION_TYPES.join(', ')}`,
  operationInvalid: 'The operation is not valid',
  noAccess: 'You do not have access to this lock',
  adminOnly: 'Only an admin of this lock can do this',
  shareSelfWiden: 'You cannot extend your own access to this lock: ask an owner of the application',
  shareBeyondOwn: 'You cannot give access beyond your own: the share must end no later than your access to this lock ends',
  shareNotStarted: 'Your access to this lock has not started yet',
  shareEnded: 'Your access to this lock has ended',
  shareWindow: 'Your access to this lock does not cover this day and time',
  lockHours: 'This lock cannot be used at this day and time',
  locationRequired: 'This lock needs your location (latitude, longitude and accuracy in metres)',
  locationTooFar: 'You are too far from the lock',
  locationInaccurate: 'Your location is not accurate enough for this lock',
  unknownUser: lockErrors.userNotFound,
  unknownTimeZone: 'Not a known time zone (use an IANA name such as Europe/London)',
  durationRange: `The unlock duration must be between ${LOCK_UNLOCK_TIME_MIN_S} and ${LOCK_UNLOCK_TIME_MAX_S} seconds`,
} as const;
