import type { LockShare } from '@latchkey/contract';
import type { TFunction } from 'i18next';

import { formatDateTime, formatTimeSeconds } from '../../../lib/dates';

/** A log time in the reader's language: today's entries by their time, older ones with their date too. */
export function formatLogTime(seconds: number, language: string, nowMs = Date.now()): string {
  const today = new Date(seconds * 1000).toDateString() === new Date(nowMs).toDateString();
  return today ? formatTimeSeconds(seconds, language) : formatDateTime(seconds, language);
}

/** A share's reach in words: its start/end bounds and its days and hours, or "Any time". */
export function describeAccess(
  share: Pick<LockShare, 'start' | 'end' | 'timeWindow'>,
  t: TFunction,
  language: string,
): string {
  const parts: string[] = [];
  if (share.start !== null) parts.push(t('shares.fromDate', { date: formatDateTime(share.start, language) }));
  if (share.end !== null) parts.push(t('shares.untilDate', { date: formatDateTime(share.end, language) }));
  const window = share.timeWindow;
  if (window) {
    const days = window.days.map((d) => t(`shares.dayNames.${d}`)).join(' ');
    parts.push(t('shares.window', { days, start: window.start, end: window.end, zone: window.timezone }));
  }
  return parts.length > 0 ? parts.join(', ') : t('shares.always');
}
