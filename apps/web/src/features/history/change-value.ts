import { REDACTED } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { formatDateTime } from '../../lib/dates';

/** Fields recorded as epoch seconds (a share's bounds): shown as a date and time in the reader's language. */
const DATE_FIELDS = new Set(['start', 'end']);
/** Members of a recorded object that are epoch seconds (a key's JWK `exp`). */
const DATE_MEMBERS = new Set(['exp', 'nbf', 'iat']);

const isScalar = (value: unknown): value is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof value);

interface TimeRule {
  start: string;
  end: string;
  timezone: string;
  days: string[];
}
const isTimeRule = (value: unknown): value is TimeRule => {
  const v = value as Partial<TimeRule> | null;
  return typeof v === 'object' && v !== null && typeof v.start === 'string' && typeof v.end === 'string' && typeof v.timezone === 'string' && Array.isArray(v.days);
};

/** A value the History shows as "—": nothing, or an empty object or list (a lock with no requirements yet). */
export const isNone = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  value === '' ||
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === 'object' && value !== null && Object.keys(value).length === 0);

/**
 * A before or after value as the History shows it: nothing reads "—", a secret reads "[redacted]" in the
 * reader's language, times read as dates (a share's start and end, a key's expiry), a role and a time window
 * read as the shares card writes them, a list as its items, an object (a key, a call to action, a lock's
 * usage requirements) one member a line.
 */
export function useChangeValue() {
  const { t, i18n } = useTranslation();
  const word = (key: string, fallback: string) => (i18n.exists(key) ? String(t(key as never)) : fallback);

  const scalar = (value: string | number | boolean, field: string): string => {
    if (typeof value === 'boolean') return value ? t('history.yes') : t('history.no');
    if (typeof value === 'number' && (DATE_FIELDS.has(field) || DATE_MEMBERS.has(field))) return formatDateTime(value, i18n.language);
    if (value === REDACTED) return t('history.redacted');
    if (field === 'role' && typeof value === 'string') return word(`shares.roles.${value}`, value);
    // A webhook's events by the names the Webhooks page gives them.
    if (field === 'events' && typeof value === 'string') return word(`webhooks.eventNames.${value.replace('.', '_')}`, value);
    return String(value);
  };

  // A share's time window or a lock's time rule as the shares card writes it: "Mon, Tue, 08:00–18:00 (Europe/Berlin)".
  const timeRule = (rule: TimeRule) =>
    t('shares.window', { days: rule.days.map((d) => word(`shares.dayNames.${d}`, d)).join(', '), start: rule.start, end: rule.end, zone: rule.timezone });
  const part = (value: unknown, field: string): string => {
    if (isNone(value)) return t('history.none');
    if (isScalar(value)) return scalar(value, field);
    if (isTimeRule(value)) return timeRule(value);
    if (Array.isArray(value) && value.every(isScalar)) return value.map((v) => scalar(v, field)).join(', ');
    // A time rule has commas of its own.
    if (Array.isArray(value) && value.every(isTimeRule)) return value.map(timeRule).join('; ');
    return JSON.stringify(value);
  };

  return (value: unknown, field: string): string => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && !isTimeRule(value)) {
      const members = Object.entries(value as Record<string, unknown>);
      if (members.length === 0) return t('history.none');
      return members
        .map(([member, v]) => `${word(`history.members.${member}`, member)}: ${part(v, member)}`)
        .join('\n');
    }
    return part(value, field);
  };
}
