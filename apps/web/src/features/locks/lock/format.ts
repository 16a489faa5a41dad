import type { LockShare } from '@latchkey/contract';
import type { TFunction } from 'i18next';

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'short', timeStyle: 'short' });
const timeOnly = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** Epoch seconds as dd/mm/yyyy, hh:mm in the browser's zone. */
export const formatDateTime = (seconds: number) => dateTime.format(new Date(seconds * 1000));

/** A log time: today's entries by their time, older ones with their date too. */
export function formatLogTime(seconds: number, nowMs = Date.now()): string {
  const at = new Date(seconds * 1000);
  return at.toDateString() === new Date(nowMs).toDateString() ? timeOnly.format(at) : dateTime.format(at);
}

/** A share's reach in words: its start/end bounds and its days and hours, or "Any time". */
export function describeAccess(share: Pick<LockShare, 'start' | 'end' | 'timeWindow'>, t: TFunction): string {
  const parts: string[] = [];
  if (share.start !== null) parts.push(t('shares.fromDate', { date: formatDateTime(share.start) }));
  if (share.end !== null) parts.push(t('shares.untilDate', { date: formatDateTime(share.end) }));
  const window = share.timeWindow;
  if (window) {
    const days = window.days.map((d) => t(`shares.dayNames.${d}`)).join(' ');
    parts.push(t('shares.window', { days, start: window.start, end: window.end, zone: window.timezone }));
  }
  return parts.length > 0 ? parts.join(', ') : t('shares.always');
}
