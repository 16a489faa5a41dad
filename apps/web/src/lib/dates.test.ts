import { afterEach, describe, expect, it, vi } from 'vitest';
import { dateLocale, formatDate, formatDateTime, formatDateTimeSeconds, formatTimeSeconds } from './dates';

const MARCH_5 = new Date(2024, 2, 5, 14, 30, 7).getTime() / 1000;

/** The browser's languages, as navigator.languages reports them (the suite's browser reads British English). */
function browserLanguages(languages: string[]) {
  vi.spyOn(navigator, 'languages', 'get').mockReturnValue(languages);
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
    browserLanguages(['en-US']);
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
  });
});
