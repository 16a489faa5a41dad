import * as z from 'zod/mini';
import { messages } from './messages.js';

/**
 * The one bound every time the platform accepts goes through. A JavaScript `Date` holds
 * ±8.64e15 ms, so an epoch value such as 9e15 or 1e308 made `new Date(s * 1000)` an Invalid Date whose
 * `toISOString()` threw a RangeError (a 500). Times on the wire are epoch seconds (fractions allowed);
 * accepted are 1970-01-01 … 9999-12-31T23:59:59Z, which both the Date and PostgreSQL's timestamptz hold.
 */
export const EPOCH_SECONDS_MIN = 0;
/** 9999-12-31T23:59:59Z. */
export const EPOCH_SECONDS_MAX = 253_402_300_799;

/** A finite number of seconds since 1970 within the bounds above (−0 counts as 0). */
export function isEpochSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= EPOCH_SECONDS_MIN && value <= EPOCH_SECONDS_MAX;
}

/** An epoch-seconds member of a JSON body; `message`: what a value that is not one gets (a field may name itself). */
export const epochSeconds = (message: string = messages.timeRange) => z.number({ error: message }).check(z.refine(isEpochSeconds, message));

/** The same in a query string (`?start=1700000000`): the text is read as a number first. */
export const epochSecondsQuery = (message: string = messages.timeRange) => z.coerce.number({ error: message }).check(z.refine(isEpochSeconds, message));

export const epochSecondsSchema = epochSeconds();
