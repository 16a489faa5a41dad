import { createAccessCodeSchema, lockMessages, messages, type AccessCodeKind, type CreateAccessCode } from '@latchkey/contract';
import type { FieldErrors, Resolver } from 'react-hook-form';
import * as z from 'zod/mini';

/**
 * The create dialog's fields. A window's ends are a day (a date picker) and an hour of it in the reader's
 * time: an offline code's window starts and ends on whole hours, so only those are offered.
 */
export interface AccessCodeFormValues {
  name: string;
  kind: AccessCodeKind;
  code: string;
  startDate: string;
  startTime: string;
  endDate: string;
  endTime: string;
}

const HOUR_MS = 3_600_000;
const pad = (n: number) => String(n).padStart(2, '0');
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const localTime = (d: Date) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

/**
 * The whole hours (of UTC, so whole epoch hours) that fall on `day` in the browser's time: 00:00 … 23:00
 * in most zones, 00:30 … 23:30 where the zone is half an hour off, 23 or 25 of them on a clock change.
 */
export function hourChoices(day: string): string[] {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return [];
  const midnight = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])).getTime();
  if (Number.isNaN(midnight)) return [];
  const choices: string[] = [];
  for (let t = Math.ceil(midnight / HOUR_MS) * HOUR_MS; localDay(new Date(t)) === day; t += HOUR_MS) {
    const label = localTime(new Date(t));
    if (!choices.includes(label)) choices.push(label);
  }
  return choices;
}

/** A day and a time of it in the browser's time as epoch seconds; null when either is missing. */
export function toEpochSeconds(day: string, time: string): number | null {
  if (!day || !time) return null;
  const ms = Date.parse(`${day}T${time}`);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** An empty form: an online code, any time. */
export function defaultAccessCodeValues(): AccessCodeFormValues {
  return { name: '', kind: 'online', code: '', startDate: '', startTime: '', endDate: '', endTime: '' };
}

/** The window an offline code is offered first: from the next whole hour, for a day. */
export function suggestedOfflineWindow(now = Date.now()): Pick<AccessCodeFormValues, 'startDate' | 'startTime' | 'endDate' | 'endTime'> {
  const start = new Date((Math.floor(now / HOUR_MS) + 1) * HOUR_MS);
  const end = new Date(start.getTime() + 24 * HOUR_MS);
  return { startDate: localDay(start), startTime: localTime(start), endDate: localDay(end), endTime: localTime(end) };
}

/**
 * The request body. An online code's window is optional (a day without an hour is not a bound); an offline
 * code always sends its window and never a code (the platform computes it).
 */
export function toCreateAccessCode(values: AccessCodeFormValues): CreateAccessCode {
  const start = toEpochSeconds(values.startDate, values.startTime);
  const end = toEpochSeconds(values.endDate, values.endTime);
  const code = values.code.trim();
  return {
    name: values.name.trim(),
    kind: values.kind,
    ...(values.kind === 'online' && code ? { code } : {}),
    ...(start !== null ? { start } : {}),
    ...(end !== null ? { end } : {}),
  };
}

/** Where a message about a member of the request body goes in the form. */
export function formField(path: string): keyof AccessCodeFormValues | null {
  const first = path.split('.')[0] ?? '';
  if (first === 'start') return 'startDate';
  if (first === 'end') return 'endDate';
  if (first === 'name' || first === 'code' || first === 'kind') return first;
  return null;
}

/**
 * Checks the body the form would send with the contract's schema, so the form shows the same messages the
 * server answers; and what the form itself knows: an offline code needs both ends, the end after the start.
 */
export const accessCodeResolver: Resolver<AccessCodeFormValues> = (values) => {
  const body = toCreateAccessCode(values);
  const errors: FieldErrors<AccessCodeFormValues> = {};
  const add = (field: keyof AccessCodeFormValues | null, message: string) => {
    if (field && !errors[field]) errors[field] = { type: 'validate', message };
  };
  const parsed = z.safeParse(createAccessCodeSchema, body);
  if (!parsed.success) for (const issue of parsed.error.issues) add(formField(issue.path.map(String).join('.')) ?? 'name', issue.message);
  // A day without its hour (or an hour without its day) is half a bound: the missing half is asked for.
  if (values.startDate && !values.startTime) add('startTime', messages.required);
  if (values.startTime && !values.startDate) add('startDate', messages.required);
  if (values.endDate && !values.endTime) add('endTime', messages.required);
  if (values.endTime && !values.endDate) add('endDate', messages.required);
  if (values.kind === 'offline') {
    if (body.start === undefined) add('startDate', messages.required);
    if (body.end === undefined) add('endDate', messages.required);
  }
  if (body.start != null && body.end != null && body.end <= body.start) add('endDate', lockMessages.endBeforeStart);
  return Object.keys(errors).length > 0 ? { values: {}, errors } : { values, errors: {} };
};
