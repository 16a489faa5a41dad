import {
  emailSchema,
  lockMessages,
  lockRoleSchema,
  timeOfDaySchema,
  timeZoneSchema,
  WEEKDAYS,
  weekdaySchema,
  type CreateLockShare,
  type LockRole,
  type Weekday,
} from '@latchkey/contract';
import * as z from 'zod/mini';

/**
 * The share dialog's fields, checked with the contract's rules. Dates come from datetime-local inputs
 * (the browser's local time); the time window's hours are in the chosen zone, as the server reads them.
 */
export interface ShareFormValues {
  email: string;
  role: LockRole;
  start: string;
  end: string;
  limitHours: boolean;
  days: Weekday[];
  from: string;
  until: string;
  timezone: string;
}

/** A datetime-local value as epoch seconds; null when empty or not a date. */
export function toEpochSeconds(local: string): number | null {
  if (!local) return null;
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

const endAfterStart = z.refine<{ start: string; end: string }>(
  (v) => {
    const start = toEpochSeconds(v.start);
    const end = toEpochSeconds(v.end);
    return start === null || end === null || end > start;
  },
  { message: lockMessages.endBeforeStart, path: ['end'] },
);

const shareBase = {
  email: emailSchema,
  role: lockRoleSchema,
  start: z.string(),
  end: z.string(),
  limitHours: z.boolean(),
};

/** With days and hours limited: at least one day, 24-hour times, a known zone (the contract's rules). */
export const shareFormSchema = z
  .object({
    ...shareBase,
    days: z.array(weekdaySchema).check(z.minLength(1, lockMessages.minimumOneDay)),
    from: timeOfDaySchema,
    until: timeOfDaySchema,
    timezone: timeZoneSchema,
  })
  .check(endAfterStart);

/** Without a time window its hidden fields are not checked: switching it off never blocks the share. */
export const shareFormWithoutWindowSchema = z
  .object({
    ...shareBase,
    days: z.array(weekdaySchema),
    from: z.string(),
    until: z.string(),
    timezone: z.string(),
  })
  .check(endAfterStart);

/** The browser's own zone, the likeliest one for a window the developer is setting up. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function defaultShareValues(): ShareFormValues {
  return {
    email: '',
    role: 'USER',
    start: '',
    end: '',
    limitHours: false,
    days: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
    from: '09:00',
    until: '17:00',
    timezone: browserTimeZone(),
  };
}

/** The request body: bounds as epoch seconds, and the window only when hours are limited (days in week order). */
export function toCreateShare(values: ShareFormValues): CreateLockShare {
  return {
    email: values.email.trim(),
    role: values.role,
    start: toEpochSeconds(values.start),
    end: toEpochSeconds(values.end),
    timeWindow: values.limitHours
      ? {
          start: values.from,
          end: values.until,
          timezone: values.timezone,
          days: WEEKDAYS.filter((d) => values.days.includes(d)),
        }
      : null,
  };
}

/** Every zone this browser knows, for the time zone field's suggestions. */
export function knownTimeZones(): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: 'timeZone') => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? [browserTimeZone()];
}
