import { REDACTED } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { formatDateTime } from '../../lib/dates';

/** Fields recorded as epoch seconds (a share's bounds): shown as a date and time in the reader's language. */
const DATE_FIELDS = new Set(['start', 'end']);
/** Members of a recorded object that are epoch seconds (a key's JWK `exp`). */
const DATE_MEMBERS = new Set(['exp', 'nbf', 'iat']);

const isScalar = (value: unknown): value is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof value);

/**
 * A before or after value as the History shows it: nothing reads "—", a secret reads "[redacted]" in the
 * reader's language, times read as dates (a share's start and end, a key's expiry), a role reads as the
 * shares card names it, a list as its items, an object (a key, a call to action) one member a line.
 */
export function useChangeValue() {
  const { t, i18n } = useTranslation();
  const word = (key: string, fallback: string) => (i18n.exists(key) ? String(t(key as never)) : fallback);

  const scalar = (value: string | number | boolean, field: string): string => {
    if (typeof value === 'boolean') return value ? t('history.yes') : t('history.no');
    if (typeof value === 'number' && (DATE_FIELDS.has(field) || DATE_MEMBERS.has(field))) return formatDateTime(value, i18n.language);
    if (value === REDACTED) return t('history.redacted');
    if (field === 'role' && typeof value === 'string') return word(`shares.roles.${value}`, value);
    return String(value);
  };

  return (value: unknown, field: string): string => {
    if (value === null || value === undefined || value === '') return t('history.none');
    if (isScalar(value)) return scalar(value, field);
    if (Array.isArray(value) && value.every(isScalar)) return value.map((v) => scalar(v, field)).join(', ');
    if (typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value as Record<string, unknown>)
        .map(([member, v]) => `${word(`history.members.${member}`, member)}: ${isScalar(v) ? scalar(v, member) : JSON.stringify(v)}`)
        .join('\n');
    }
    return JSON.stringify(value);
  };
}
