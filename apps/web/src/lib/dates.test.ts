import { afterEach, describe, expect, it, vi } from 'vitest';
import { dateLocale, formatDate, formatDateTime, formatDateTimeSeconds, formatTimeSeconds, pickerFormat } from './dates';

const MARCH_5 = new Date(2024, 2, 5, 14, 30, 7).getTime() / 1000;

/** The browser's languages, as navigator.languages reports them (the suite's browser reads British English). */
function browserLanguages(languages: string[]) {
  vi.spyOn(navigator, 'languages', 'get').mockReturnValue(languages);
  // The browser's own language (its date pickers'): the first of them.
  vi.spyOn(navigator, 'language', 'get').mockReturnValue(languages[0] ?? 'en-US');
}
afterEach(() => vi.restoreAllMocks());

describe('formatDate', () => {
  it('writes English as the browser’s English writes it, German as dd.mm.yyyy', () => {
    browserLanguages(['en-GB', 'en']);
    expect(formatDate(MARCH_5, 'en')).toBe('05/03/2024');
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
  });
  it('adds the time in the locale’s form', () => {
    browserLanguages(['en-GB', 'en']);
    expect(formatDateTime(MARCH_5, 'en')).toBe('05/03/2024, 14:30');
    expect(formatDateTime(MARCH_5, 'de')).toBe('05.03.2024, 14:30');
  });
  it('to the second where it matters (outbox, activity)', () => {
    browserLanguages(['en-GB', 'en']);
    expect(formatDateTimeSeconds(MARCH_5, 'en')).toBe('05/03/2024, 14:30:07');
    expect(formatDateTimeSeconds(MARCH_5, 'de')).toBe('05.03.2024, 14:30:07');
    expect(formatTimeSeconds(MARCH_5, 'de')).toBe('14:30:07');
  });
});

/**
 * History read 26/11/2026 while the browser's date pickers read mm/dd/yyyy. English follows the
 * browser's English (the pickers' locale), everywhere; German is always dd.mm.yyyy.
 */
describe('one locale for the portal’s dates and the browser’s date pickers', () => {
  it('a US browser reads English dates as mm/dd/yyyy, the time as its clock', () => {
    browserLanguages(['en-US', 'en']);
    expect(formatDate(MARCH_5, 'en')).toBe('03/05/2024');
    expect(formatDateTime(MARCH_5, 'en')).toBe('03/05/2024, 02:30 PM');
    expect(dateLocale('en')).toBe('en-US');
  });
  it('takes the first English of the browser’s languages, else US English; German is German', () => {
    browserLanguages(['de-DE', 'en-AU', 'en-US']);
    expect(dateLocale('en')).toBe('en-AU');
    expect(formatDate(MARCH_5, 'en')).toBe('05/03/2024');
    browserLanguages(['fr-FR']);
    expect(dateLocale('en')).toBe('en-US');
    expect(dateLocale('de')).toBe('de-DE');
    // German likewise takes the browser's German (Swiss, Austrian …), whose pickers the page then matches.
    browserLanguages(['de-CH', 'en-US']);
    expect(dateLocale('de')).toBe('de-CH');
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
    browserLanguages(['en-US']);
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
  });
});

/**
 * The pickers follow the browser's language, not the page's: a German page in a US browser writes
 * 05.03.2024 while its pickers want 03/05/2024. Where the two differ, the picker says its format; where
 * they agree, nothing is added.
 */
describe('pickerFormat: the date pickers say their format where it is not the page’s', () => {
  it('a German page in a US browser: the pickers’ month-first order, spelled in German', () => {
    browserLanguages(['en-US', 'en']);
    expect(pickerFormat('de')).toBe('MM/TT/JJJJ');
    expect(pickerFormat('de', true)).toBe('MM/TT/JJJJ, hh:mm AM/PM');
    expect(pickerFormat('en')).toBeNull();
    expect(pickerFormat('en', true)).toBeNull();
  });
  it('an English page in a German browser: day first, with dots', () => {
    browserLanguages(['de-DE', 'de']);
    expect(pickerFormat('en')).toBe('DD.MM.YYYY');
    expect(pickerFormat('de')).toBeNull();
    expect(pickerFormat('de', true)).toBeNull();
  });
  it('nothing where the browser speaks the page’s language, in any of its variants', () => {
    for (const languages of [['en-GB'], ['en-AU', 'en'], ['en-US']]) {
      browserLanguages(languages);
      expect(pickerFormat('en', true), languages[0]).toBeNull();
    }
    for (const languages of [['de-AT'], ['de-CH'], ['de-DE']]) {
      browserLanguages(languages);
      expect(pickerFormat('de', true), languages[0]).toBeNull();
    }
  });
});
