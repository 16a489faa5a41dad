import * as z from 'zod/mini';
import { epochSecondsQuery } from './time.js';
import { lockMessages } from './sandbox-texts.js';

/**
 * The activity log as CSV for auditors: `GET {base}/lock/{lockId}/log.csv` (one lock) and
 * `GET {base}/log.csv` (every lock of the application), both with optional `start` and `end`.
 */

/** Epoch seconds, inclusive bounds on the entry's time; the same rules as the lock log's page query. */
const exportBound = epochSecondsQuery(lockMessages.timeBoundNumber);

export const activityExportQuerySchema = z
  .object({
    start: z.optional(exportBound),
    end: z.optional(exportBound),
  })
  .check(
    z.refine((q) => q.start === undefined || q.end === undefined || q.end >= q.start, { message: lockMessages.endBeforeStart, path: ['end'] }),
  );
export type ActivityExportQuery = z.infer<typeof activityExportQuerySchema>;

/**
 * The header row, in order. `lock_name` is only in the application's export. `time` is ISO 8601 UTC to the
 * microsecond; `result` is `accepted` or `refused`; `offline` is `true` or `false`; empty cells are nulls.
 */
export const ACTIVITY_EXPORT_COLUMNS = [
  'time',
  'lock_id',
  'lock_name',
  'type',
  'result',
  'reason',
  'method',
  'source',
  'offline',
  'actor_user_id',
  'actor_email',
  'actor_name',
  'subject',
  'access_code_id',
  'value',
  'repeats',
] as const;
export type ActivityExportColumn = (typeof ACTIVITY_EXPORT_COLUMNS)[number];

/** A lock's export has every column but the lock's name (the file is that lock's). */
export const LOCK_ACTIVITY_EXPORT_COLUMNS: readonly ActivityExportColumn[] = ACTIVITY_EXPORT_COLUMNS.filter((c) => c !== 'lock_name');

export const ACTIVITY_EXPORT_RESULTS = { accepted: 'accepted', refused: 'refused' } as const;

/** What the OpenAPI document says the 200 answer is. */
export const activityExportDescription =
  'The activity as CSV (RFC 4180, UTF-8, CRLF line ends, a header row), oldest first, streamed. A cell that a spreadsheet would read as a formula (starting with =, +, -, @, a tab or a carriage return) starts with an apostrophe.';
