/**
 * Dates and times in the reader's language, through Intl, in the same form as the browser's own date
 * pickers: English is the browser's English (en-US: 03/05/2024, en-GB: 05/03/2024; US English when the
 * browser names none), German is always dd.mm.yyyy. (A fixed dd/mm/yyyy beside mm/dd/yyyy pickers
 * would put two orders of day and month on one page.) Times are in
 * the viewer's time zone.
 */
export function dateLocale(language: string): string {
  if (language === 'de') return 'de-DE';
  if (language !== 'en') return language;
  const browser = typeof navigator === 'undefined' ? [] : (navigator.languages ?? [navigator.language]);
  return browser.find((l) => /^en(-|$)/i.test(l) && l.length > 2) ?? 'en-US';
}

const DAY: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit', year: 'numeric' };
const HOURS: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };
const STYLES = {
  date: DAY,
  dateTime: { ...DAY, ...HOURS },
  dateTimeSeconds: { ...DAY, ...HOURS, second: '2-digit' },
  timeSeconds: { ...HOURS, second: '2-digit' },
} satisfies Record<string, Intl.DateTimeFormatOptions>;

const formats = new Map<string, Intl.DateTimeFormat>();

function format(style: keyof typeof STYLES, language: string, epochSeconds: number): string {
  const locale = dateLocale(language);
  const key = `${style} ${locale}`;
  let found = formats.get(key);
  if (!found) formats.set(key, (found = new Intl.DateTimeFormat(locale, STYLES[style])));
  return found.format(epochSeconds * 1000);
}

/** A day, from epoch seconds: 03/05/2024 (en-US), 05/03/2024 (en-GB), 05.03.2024 (de). */
export const formatDate = (epochSeconds: number, language: string) => format('date', language, epochSeconds);

/** A day and time, from epoch seconds: 03/05/2024, 02:30 PM (en-US), 05.03.2024, 14:30 (de). */
export const formatDateTime = (epochSeconds: number, language: string) => format('dateTime', language, epochSeconds);

/** A day and time to the second (when an email was sent): 05/03/2024, 14:30:07. */
export const formatDateTimeSeconds = (epochSeconds: number, language: string) =>
  format('dateTimeSeconds', language, epochSeconds);

/** A time of day to the second (today's log entries): 14:30:07. */
export const formatTimeSeconds = (epochSeconds: number, language: string) => format('timeSeconds', language, epochSeconds);
