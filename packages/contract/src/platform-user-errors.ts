/**
 * The partner-user API's texts and page sizes, apart from its schemas: the portal's string table imports
 * the texts, and a module's schemas are built wherever any of its exports is used (see token-checks.ts).
 */
export const PLATFORM_USERS_MAX_PAGE_SIZE = 100;
export const PLATFORM_USERS_DEFAULT_PAGE_SIZE = 50;

export const platformUserErrors = {
  userExists: 'This user has already been added to the application',
  userNotFound: 'This user is not a user of the application',
  invalidCursor: 'This page link is not valid; start again from the first page',
  pageSizeTooLarge: `At most ${PLATFORM_USERS_MAX_PAGE_SIZE} users per page`,
  tokenMissing: 'Send the application-signed token as "Authorization: Bearer <token>"',
  /**
   * Any failed issuer, key, algorithm or signature check, to everyone but the application's owners: which
   * one failed would tell whether an issuer or a kid is registered. The tester names it.
   */
  tokenNotVerified: "The token's signature could not be verified with a key registered for its issuer. The token tester on the application's Authentication card shows which check failed",
} as const;
