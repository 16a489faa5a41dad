/**
 * Dates and times in the reader's language, through Intl. English reads dd/mm/yyyy (spec §2's Added
 * column), so it is British English; German reads dd.mm.yyyy. Times are in the viewer's time zone.
 */
const LOCALES: Record<string, string> = { en: 'en-GB', de: 'de-DE' };
const localeOf = (language: string) => LOCALES[language] ?? language;

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
  const key = `${style} ${language}`;
  let found = formats.get(key);
  if (!found) formats.set(key, (found = new Intl.DateTimeFormat(localeOf(language), STYLES[style])));
  return found.format(epochSeconds * 1000);
}

/** A day, from epoch seconds: 05/03/2024 (en), 05.03.2024 (de). */
export const formatDate = (epochSeconds: number, language: string) => format('date', language, epochSeconds);

/** A day and time, from epoch seconds: 05/03/2024, 14:30 (en), 05.03.2024, 14:30 (de). */
export const formatDateTime = (epochSeconds: number, language: string) => format('dateTime', language, epochSeconds);

/** A day and time to the second (when an email was sent): 05/03/2024, 14:30:07. */
export const formatDateTimeSeconds = (epochSeconds: number, language: string) =>
  format('dateTimeSeconds', language, epochSeconds);

/** A time of day to the second (today's log entries): 14:30:07. */
export const formatTimeSeconds = (epochSeconds: number, language: string) => format('timeSeconds', language, epochSeconds);
