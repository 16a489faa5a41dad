/**
 * Dates and times in the reader's language, through Intl. English reads dd/mm/yyyy (spec §2's Added
 * column), so it is British English; German reads dd.mm.yyyy. Times are in the viewer's time zone.
 */
const LOCALES: Record<string, string> = { en: 'en-GB', de: 'de-DE' };
const localeOf = (language: string) => LOCALES[language] ?? language;

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

function cached(into: Map<string, Intl.DateTimeFormat>, language: string, options: Intl.DateTimeFormatOptions) {
  let format = into.get(language);
  if (!format) into.set(language, (format = new Intl.DateTimeFormat(localeOf(language), options)));
  return format;
}

/** A day, from epoch seconds: 05/03/2024 (en), 05.03.2024 (de). */
export function formatDate(epochSeconds: number, language: string): string {
  return cached(dateFormats, language, { day: '2-digit', month: '2-digit', year: 'numeric' }).format(epochSeconds * 1000);
}

/** A day and time, from epoch seconds: 05/03/2024, 14:30 (en), 05.03.2024, 14:30 (de). */
export function formatDateTime(epochSeconds: number, language: string): string {
  return cached(dateTimeFormats, language, { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit' }).format(
    epochSeconds * 1000,
  );
}
