import { sql, type AnyColumn } from 'drizzle-orm';
import { EPOCH_SECONDS_MAX, EPOCH_SECONDS_MIN, isUuid } from '@latchkey/contract';
import { badRequest } from '../errors.js';

/**
 * The opaque cursors of keyset-paged lists (a lock's log, the history, partner users, webhook deliveries):
 * base64url of `[the last row's time to the microsecond, its tie-breaker]`, the tie-breaker being a `seq`
 * (a positive integer) or a row id (a UUID). A cursor that is not one is a 400 with the list's own message.
 */
const CURSOR_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;

/**
 * Whether `value` is a cursor time: the shape above, and a real instant within the contract's epoch bounds.
 * The shape alone let `9999-99-99T99:99:99.000000Z` or `0000-00-00T…` through to `::timestamptz`, which
 * PostgreSQL refuses (a 500); February 30th or hour 24 would be read as another day.
 */
function isCursorTime(value: unknown): value is string {
  const match = typeof value === 'string' ? CURSOR_TIME.exec(value) : null;
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year); // Date.UTC reads the years 0–99 as 1900–1999
  const seconds = date.getTime() / 1000;
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second &&
    seconds >= EPOCH_SECONDS_MIN &&
    seconds <= EPOCH_SECONDS_MAX
  );
}

/** The column's time as the cursor carries it: UTC, to the microsecond (a JS Date would lose those). */
export const cursorTimeOf = (column: AnyColumn) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function encodeCursor(time: string, tieBreaker: number | string): string {
  return Buffer.from(JSON.stringify([time, tieBreaker])).toString('base64url');
}

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const isUuidText = (value: unknown): value is string => typeof value === 'string' && isUuid(value);

export function decodeCursor(cursor: string, tieBreaker: 'seq', refusal: string): [string, number];
export function decodeCursor(cursor: string, tieBreaker: 'uuid', refusal: string): [string, string];
export function decodeCursor(cursor: string, tieBreaker: 'seq' | 'uuid', refusal: string): [string, number | string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && isCursorTime(value[0])) {
      const [time, last] = value as [string, unknown];
      if (tieBreaker === 'seq' ? isSeq(last) : isUuidText(last)) return [time, last as number | string];
    }
  } catch {
    // not base64url JSON: the same 400 below
  }
  throw badRequest(refusal);
}
