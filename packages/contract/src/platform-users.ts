import * as z from 'zod/mini';
import { keySourceSchema } from './issuers.js';
import { MAX_TEXT_LENGTH } from './constants.js';
import { messages } from './messages.js';
import { emailSchema } from './rules.js';
import { checkText } from './text.js';
import { PLATFORM_USERS_DEFAULT_PAGE_SIZE, PLATFORM_USERS_MAX_PAGE_SIZE, platformUserErrors } from './platform-user-errors.js';
import { TOKEN_CHECK_IDS } from './token-checks.js';

/**
 * Application users: the people an application's own backend signs tokens for, and the token
 * tester's report. Timestamps are epoch seconds, like `Application.lastUpdated`.
 */
/** A pasted token longer than this is not a JWT anyone signs; refused before any parsing. */
export const MAX_TOKEN_LENGTH = 16 * 1024;


export const applicationUserStatusSchema = z.enum(['active', 'pending']);

export const applicationUserSchema = z.object({
  userId: z.string(),
  /** The token's `sub`; null while the user is pending (added by email, never signed in). */
  sub: z.nullable(z.string()),
  email: z.nullable(z.string()),
  displayName: z.nullable(z.string()),
  status: applicationUserStatusSchema,
  /** When the user was added (the Settings table's "Added" column), epoch seconds. */
  createdAt: z.number(),
  updatedAt: z.number(),
  lastSeenAt: z.nullable(z.number()),
});
export type ApplicationUser = z.infer<typeof applicationUserSchema>;

export const applicationUserListQuerySchema = z.object({
  /** Opaque: pass back the previous page's `nextCursor` unchanged. */
  cursor: z.optional(z.string().check(z.maxLength(200, platformUserErrors.invalidCursor), checkText())),
  pageSize: z._default(
    z.coerce
      .number({ error: 'pageSize must be a number' })
      .check(
        z.refine(Number.isInteger, 'pageSize must be a whole number'),
        z.gte(1, 'pageSize must be at least 1'),
        z.lte(PLATFORM_USERS_MAX_PAGE_SIZE, platformUserErrors.pageSizeTooLarge),
      ),
    PLATFORM_USERS_DEFAULT_PAGE_SIZE,
  ),
  /** Case-insensitive substring of the email or display name. */
  search: z.optional(
    z
      .string()
      .check(
        z.trim(),
        z.maxLength(MAX_TEXT_LENGTH, messages.tooLong),
        checkText(),
      ),
  ),
});
export type ApplicationUserListQuery = z.infer<typeof applicationUserListQuerySchema>;

export const applicationUserListSchema = z.object({
  users: z.array(applicationUserSchema),
  /** null on the last page. */
  nextCursor: z.nullable(z.string()),
});
export type ApplicationUserList = z.infer<typeof applicationUserListSchema>;

export const addApplicationUserSchema = z.object({ email: emailSchema });

export const removeApplicationUserSchema = z.object({ userId: z.uuid({ error: 'Not a valid user id' }) });

/** GET /platform/auth: the identity an application-signed token proved. */
export const platformIdentitySchema = z.object({
  applicationId: z.string(),
  sub: z.string(),
  email: z.nullable(z.string()),
  displayName: z.nullable(z.string()),
});

export const tokenCheckRequestSchema = z.object({
  token: z
    .string({ error: messages.required })
    .check(z.trim(), z.minLength(1, messages.required), z.maxLength(MAX_TOKEN_LENGTH, messages.tooLong), checkText()),
});

export const tokenCheckIdSchema = z.enum(TOKEN_CHECK_IDS);

export const tokenCheckSchema = z.object({
  id: tokenCheckIdSchema,
  label: z.string(),
  /** skipped: could not run because an earlier step failed (e.g. no key, so no signature check). */
  status: z.enum(['pass', 'fail', 'skipped']),
  message: z.string(),
});
export type TokenCheck = z.infer<typeof tokenCheckSchema>;

export const tokenCheckReportSchema = z.object({
  valid: z.boolean(),
  /** The first failing check's message, null when valid. */
  error: z.nullable(z.string()),
  header: z.nullable(z.record(z.string(), z.unknown())),
  claims: z.nullable(z.record(z.string(), z.unknown())),
  applicationId: z.nullable(z.string()),
  checks: z.array(tokenCheckSchema),
  /** Which key the signature was checked with: an uploaded one or the issuer's key set's. */
  keySource: z.optional(z.nullable(keySourceSchema)),
});
export type TokenCheckReport = z.infer<typeof tokenCheckReportSchema>;
