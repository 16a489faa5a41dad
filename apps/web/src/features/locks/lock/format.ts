import type { LockLogEntry, LockShare } from '@latchkey/contract';
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

/** The field names the API writes for a settings change: the portal's (locks.service) and the SDK's (lock-properties.service). */
const SETTING_NAMES = ['unlockTime', 'usageRequirements', 'name', 'permittedAddresses', 'hidden'] as const;
type SettingName = (typeof SETTING_NAMES)[number];
const isSettingName = (part: string): part is SettingName => (SETTING_NAMES as readonly string[]).includes(part);

/** One part of a settings change's subject, as the API writes it, in words ('unlockTime' → 'unlock time'). */
function settingPart(part: string, t: TFunction): string {
  if (isSettingName(part)) return t(`activity.settingNames.${part}`);
  const seconds = /^unlock time (\d+) s$/.exec(part);
  if (seconds) return t('activity.unlockTimeValue', { seconds: seconds[1] ?? '' });
  const hours = /^hours (\S+)–(\S+) (\S+)$/.exec(part);
  if (hours) return t('activity.hoursValue', { start: hours[1] ?? '', end: hours[2] ?? '', zone: hours[3] ?? '' });
  if (part === 'hours cleared') return t('activity.hoursCleared');
  return part;
}

/**
 * What a log entry concerned, in the reader's language: a settings change names the settings in words
 * (the API writes field names: "unlockTime, usageRequirements"), a share its role; anything else (whom
 * a share or revocation was for) as the API gave it.
 */
export function describeSubject(entry: Pick<LockLogEntry, 'type' | 'subject'>, t: TFunction): string | null {
  if (!entry.subject) return null;
  if (entry.type === 'SETTINGS') {
    return t('activity.settingsSubject', { what: entry.subject.split(', ').map((part) => settingPart(part, t)).join(', ') });
  }
  const withRole = /^(.*) \((USER|ADMIN)\)$/.exec(entry.subject);
  const role = withRole?.[2] as 'USER' | 'ADMIN' | undefined;
  const subject = withRole && role ? `${withRole[1]} (${t(`shares.roles.${role}`)})` : entry.subject;
  return t('activity.subject', { subject });
}
