import { operationErrors } from './sandbox-texts.js';
import { LOCATION_ACCURACY_LIMIT_M, WEEKDAYS, type LocationAccuracy, type TimeRule, type UsageRequirements, type Weekday } from './locks.js';
import type { OperationLocation } from './operations.js';

/**
 * The rules an operation must meet wherever it is checked — by the platform before it applies or sends
 * one, and by the lock again from its own config — as pure functions of the rule, the request and the
 * time (epoch ms): time windows (days and hours in an IANA zone, spanning midnight when the end is before
 * the start) and the lock's location rule (haversine distance within the radius, accuracy within the
 * tier's limit). Each check answers null when met, or the problem: the reason's key in the operation
 * catalogue, decided where the check fails, and its message.
 */

/** The key of a reason in the operation catalogue (`operationErrors`). */
export type OperationErrorKey = keyof typeof operationErrors;

/** Why a rule was not met: the reason's catalogue key, and its message (the catalogue's text, some with figures after it). */
export interface RuleProblem {
  key: OperationErrorKey;
  message: string;
}

/** The problem `key`, its message the catalogue's text followed by `detail` when given. */
export const ruleProblem = (key: OperationErrorKey, detail?: string): RuleProblem => ({
  key,
  message: detail === undefined ? operationErrors[key] : `${operationErrors[key]} ${detail}`,
});

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day at `atMs` in `timeZone`; throws RangeError for an unknown zone. */
export function localTime(atMs: number, timeZone: string): { day: Weekday; minute: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });
    formatters.set(timeZone, format);
  }
  let day = '';
  let hour = 0;
  let minute = 0;
  for (const part of format.formatToParts(atMs)) {
    if (part.type === 'weekday') day = part.value.toUpperCase();
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { day: day as Weekday, minute: (hour % 24) * 60 + minute };
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const previousDay = (day: Weekday): Weekday => WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7]!;

/**
 * Whether `atMs` falls in the rule's window. The start is inclusive, the end exclusive; a window whose
 * end is before its start runs past midnight and belongs to the day it starts on (Friday 22:00–06:00
 * admits Saturday 05:59); equal start and end mean the whole of each listed day.
 */
export function isWithinTimeRule(rule: TimeRule, atMs: number): boolean {
  const { day, minute } = localTime(atMs, rule.timezone);
  const start = minuteOf(rule.start);
  const end = minuteOf(rule.end);
  if (start === end) return rule.days.includes(day);
  if (start < end) return rule.days.includes(day) && minute >= start && minute < end;
  return (rule.days.includes(day) && minute >= start) || (rule.days.includes(previousDay(day)) && minute < end);
}

/** null when any of the rules admits `atMs` (no rules admit everything); otherwise the problem `key`. */
export function checkTimeRules(rules: readonly TimeRule[], atMs: number, key: OperationErrorKey): RuleProblem | null {
  if (rules.length === 0) return null;
  try {
    return rules.some((rule) => isWithinTimeRule(rule, atMs)) ? null : ruleProblem(key);
  } catch {
    return ruleProblem('unknownTimeZone');
  }
}

const EARTH_RADIUS_M = 6_371_008.8;
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in metres between two points given in degrees. */
export function haversineMetres(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Whether a position reported with `accuracy` metres of uncertainty is good enough for the tier. */
export function meetsAccuracyTier(tier: LocationAccuracy, accuracy: number): boolean {
  return accuracy <= LOCATION_ACCURACY_LIMIT_M[tier];
}

/** The lock's usage requirements: its time rules, then its location rule when enabled. */
export function checkUsageRequirements(requirements: UsageRequirements, location: OperationLocation | undefined, atMs: number): RuleProblem | null {
  const timeProblem = checkTimeRules(requirements.time ?? [], atMs, 'lockHours');
  if (timeProblem) return timeProblem;
  const rule = requirements.location;
  if (!rule?.enabled) return null;
  if (!location) return ruleProblem('locationRequired');
  if (!meetsAccuracyTier(rule.accuracy, location.accuracy))
    return ruleProblem('locationInaccurate', `(${location.accuracy} m; ${rule.accuracy} needs ${LOCATION_ACCURACY_LIMIT_M[rule.accuracy]} m or better)`);
  const distance = haversineMetres(rule, location);
  if (distance > rule.radius) return ruleProblem('locationTooFar', `(${Math.round(distance)} m away; the lock allows ${rule.radius} m)`);
  return null;
}
