import {
  ACCESS_METHODS,
  ACTIVITY_SOURCES,
  DELIVERY_STATUSES,
  HISTORY_FIELDS,
  HISTORY_KINDS,
  LOCATION_ACCURACIES,
  LOCK_LOG_TYPES,
  LOCK_ROLES,
  OUTBOX_EMAIL_KINDS,
  WEBHOOK_DELIVERY_EVENTS,
  WEEKDAYS,
} from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { appPagesDe } from './app-pages-de';
import { appPagesEn } from './app-pages-en';
import { LANGUAGES, type Language } from './catalogue';
import { de } from './de';
import { en } from './en';

/** Each language's whole table, as the portal loads it. */
const tables: Record<Language, object> = { en: { ...en, ...appPagesEn }, de: { ...de, ...appPagesDe } };

/**
 * Every value of each enum the portal shows, and the key that names it in words (as the page builds it):
 * a value without a text would show as its code ("device.online", "settings.hidden").
 */
const shown: [what: string, values: readonly string[], key: (value: string) => string][] = [
  ['webhook events', WEBHOOK_DELIVERY_EVENTS, (e) => `webhooks.eventNames.${e.replace('.', '_')}`],
  ['webhook delivery statuses', DELIVERY_STATUSES, (s) => `webhooks.statuses.${s}`],
  ['lock log types', LOCK_LOG_TYPES, (type) => `activity.types.${type}`],
  ['access methods', ACCESS_METHODS, (method) => `activityDetails.how.${method}`],
  ['activity sources', ACTIVITY_SOURCES, (source) => `activityDetails.reportedBy.${source}`],
  ['history kinds', HISTORY_KINDS, (kind) => `history.kinds.${kind}`],
  ['history fields', HISTORY_FIELDS, (field) => `history.fields.${field.replace(/\./g, '_')}`],
  ['share roles', LOCK_ROLES, (role) => `shares.roles.${role}`],
  ['weekdays', WEEKDAYS, (day) => `shares.dayNames.${day}`],
  ['location accuracies', LOCATION_ACCURACIES, (tier) => `lockSettings.tiers.${tier}`],
  ['Outbox email kinds', OUTBOX_EMAIL_KINDS, (kind) => `outbox.kinds.${kind}`],
];

/** The text at a dotted key; a member name may itself hold a dot or dash ('lock-invitation'). */
function textAt(table: object, key: string): unknown {
  const [first, second, ...rest] = key.split('.');
  const node = (table as Record<string, Record<string, Record<string, unknown>>>)[first!]?.[second!];
  return node?.[rest.join('.')];
}

describe.each(LANGUAGES)('the %s table names every enum value the portal shows', (language) => {
  it.each(shown)('%s', (_what, values, key) => {
    const missing = values.map(key).filter((k) => typeof textAt(tables[language], k) !== 'string' || !String(textAt(tables[language], k)).trim());
    expect(missing).toEqual([]);
  });
});
