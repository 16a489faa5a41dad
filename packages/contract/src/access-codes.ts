import * as z from 'zod/mini';
import {
  ACCESS_CODE_KINDS,
  ACCESS_CODE_MAX_DIGITS,
  ACCESS_CODE_MIN_DIGITS,
  ACCESS_CODE_STATUSES,
  MAX_ACCESS_CODE_NAME_LENGTH,
  OFFLINE_ACCESS_CODE_DIGITS,
  OFFLINE_ACCESS_CODE_MAX_HOURS,
  OFFLINE_ACCESS_CODE_MIN_HOURS,
  accessCodeMessages,
} from './access-code-texts.js';
import { lockMessages } from './sandbox-texts.js';
import { idParam, text } from './text.js';
import { epochSeconds } from './time.js';

export * from './access-code-texts.js';

/**
 * Access codes: PIN codes a lock's keypad takes (shared/design/device-protocol.md, "Access codes").
 * Owners under /platform/application/{id}/lock/{lockId}/access-code, a lock's ADMIN under
 * /device/{lockId}/access-code. Times are epoch seconds; a code holds while start <= now < end (null:
 * unbounded on that side).
 */

const HOUR_S = 3600;

/** An access code's own digits, as an owner types them (surrounding spaces are dropped). */
export const accessCodeDigitsSchema = z
  .string({ error: accessCodeMessages.codeDigits })
  .check(
    z.trim(),
    z.regex(/^\d*$/, accessCodeMessages.codeDigits),
    z.minLength(ACCESS_CODE_MIN_DIGITS, accessCodeMessages.codeLength),
    z.maxLength(ACCESS_CODE_MAX_DIGITS, accessCodeMessages.codeLength),
  );

const boundSchema = z.nullish(epochSeconds(accessCodeMessages.timeNumber).check(z.refine(Number.isInteger, accessCodeMessages.timeNumber)));
const isOffline = (body: { kind?: unknown }) => body.kind === 'offline';
const hasWindow = (body: { start?: unknown; end?: unknown }): body is { start: number; end: number } => typeof body.start === 'number' && typeof body.end === 'number';

/**
 * POST …/access-code. An online code (the default) takes `code` (4–8 digits; 6 made up when absent) and
 * optional bounds; an offline code takes no `code` (the platform computes it) and needs both bounds, on
 * whole hours, 1 hour to 30 days apart.
 */
export const createAccessCodeSchema = z
  .object({
    name: text({ max: MAX_ACCESS_CODE_NAME_LENGTH, tooLong: accessCodeMessages.nameTooLong }),
    code: z.optional(accessCodeDigitsSchema),
    start: boundSchema,
    end: boundSchema,
    kind: z._default(z.enum(ACCESS_CODE_KINDS, { error: accessCodeMessages.kind }), 'online'),
  })
  .check(
    z.refine((b) => !hasWindow(b) || b.end > b.start, { message: lockMessages.endBeforeStart, path: ['end'] }),
    z.refine((b) => !isOffline(b) || b.code === undefined, { message: accessCodeMessages.offlineCodeGiven, path: ['code'] }),
    z.refine((b) => !isOffline(b) || hasWindow(b), { message: accessCodeMessages.offlineWindowRequired, path: ['start'] }),
    z.refine(
      (b) => !isOffline(b) || !hasWindow(b) || b.end <= b.start || (b.end - b.start >= OFFLINE_ACCESS_CODE_MIN_HOURS * HOUR_S && b.end - b.start <= OFFLINE_ACCESS_CODE_MAX_HOURS * HOUR_S),
      { message: accessCodeMessages.offlineWindowLength, path: ['end'] },
    ),
    z.refine((b) => !isOffline(b) || !hasWindow(b) || (b.start % HOUR_S === 0 && b.end % HOUR_S === 0), { message: accessCodeMessages.offlineWholeHours, path: ['start'] }),
  );
export type CreateAccessCode = z.infer<typeof createAccessCodeSchema>;

/** An access code as owners and the lock's ADMINs see it: the code itself included. */
export const accessCodeSchema = z.object({
  accessCodeId: z.string(),
  lockId: z.string(),
  name: z.string(),
  code: z.string(),
  kind: z.enum(ACCESS_CODE_KINDS),
  start: z.nullable(z.number()),
  end: z.nullable(z.number()),
  status: z.enum(ACCESS_CODE_STATUSES),
  createdAt: z.number(),
});
export type AccessCode = z.infer<typeof accessCodeSchema>;
export const accessCodeListSchema = z.array(accessCodeSchema);

/** POST …/lock/{lockId}/simulate/keypad: a code typed at a virtual lock's keypad, at most an offline code's digits. */
export const keypadEntrySchema = z.object({
  code: z.string({ error: accessCodeMessages.keypadDigits }).check(z.trim(), z.regex(new RegExp(`^\\d{1,${OFFLINE_ACCESS_CODE_DIGITS}}$`), accessCodeMessages.keypadDigits)),
});
export const keypadResultSchema = z.object({ outcome: z.enum(['DONE', 'REFUSED']), reason: z.optional(z.string()) });
export type KeypadResult = z.infer<typeof keypadResultSchema>;

export const accessCodeLockParamsSchema = z.object({ applicationId: idParam(), lockId: idParam() });
export const accessCodeParamsSchema = z.object({ applicationId: idParam(), lockId: idParam(), accessCodeId: idParam() });
export const deviceAccessCodeLockParamsSchema = z.object({ lockId: idParam() });
export const deviceAccessCodeParamsSchema = z.object({ lockId: idParam(), accessCodeId: idParam() });
