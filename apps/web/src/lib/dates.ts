/**
 * Dates and times in the reader's language, through Intl, in the same form as the browser's own date
 * pickers. The pickers (`<input type="date">`, `datetime-local`) write dates as the browser's language
 * does, whatever the page's language; so each portal language takes the browser's own variant of it when
 * the browser has one (en-US: 03/05/2024, en-GB: 05/03/2024, de-AT/de-CH/de-DE: 05.03.2024), else its
 * usual one (en-US, de-DE). Where the pickers still write dates another way than the page does (a German
 * page in an English browser), the pickers say their format (`pickerFormat`). Times are in the viewer's
 * time zone.
 */
export function dateLocale(language: string): string {
  if (language !== 'en' && language !== 'de') return language;
  const own = browserLanguages().find((l) => l.toLowerCase().startsWith(`${language}-`));
  return own ?? (language === 'de' ? 'de-DE' : 'en-US');
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}

/** The locale the browser's own date pickers write in: the browser's language (its first). */
function pickerLocale(): string {
  return (typeof navigator === 'undefined' ? undefined : navigator.language) ?? browserLanguages()[0] ?? 'en-US';
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

/** The letters a format is spelled with, in the reader's language. */
const LETTERS: Record<string, Partial<Record<Intl.DateTimeFormatPartTypes, string>>> = {
  en: { day: 'DD', month: 'MM', year: 'YYYY', hour: 'hh', minute: 'mm', dayPeriod: 'AM/PM' },
  de: { day: 'TT', month: 'MM', year: 'JJJJ', hour: 'hh', minute: 'mm', dayPeriod: 'AM/PM' },
};

const patterns = new Map<string, string>();

/**
 * How `locale` writes a day (with its time): 'MM/DD/YYYY', 'TT.MM.JJJJ, hh:mm'. Worked out once for each
 * locale: making an Intl.DateTimeFormat was the activity card's costliest part of every render.
 */
function pattern(locale: string, withTime: boolean, language: string): string {
  const key = `${locale} ${withTime} ${language}`;
  let found = patterns.get(key);
  if (found !== undefined) return found;
  const letters = LETTERS[language] ?? LETTERS.en!;
  found = new Intl.DateTimeFormat(locale, withTime ? STYLES.dateTime : STYLES.date)
    .formatToParts(0)
    // (A plain space for Intl's narrow no-break one before AM/PM.)
    .map((p) => (p.type === 'literal' ? p.value.replace(/\s/g, ' ') : (letters[p.type] ?? p.value)))
    .join('');
  patterns.set(key, found);
  return found;
}

/**
 * The format the browser's date picker writes in, when it is not the one the page writes dates in (null
 * when they agree): shown with the picker, so that 03/05 on a German page is read as the 5th of March.
 */
export function pickerFormat(language: string, withTime = false): string | null {
  const picker = pattern(pickerLocale(), withTime, language);
  return picker === pattern(dateLocale(language), withTime, language) ? null : picker;
}
