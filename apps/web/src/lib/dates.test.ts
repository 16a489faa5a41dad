import { describe, expect, it } from 'vitest';
import { formatDate, formatDateTime, formatDateTimeSeconds, formatTimeSeconds } from './dates';

const MARCH_5 = new Date(2024, 2, 5, 14, 30, 7).getTime() / 1000;

describe('formatDate', () => {
  it('writes English as dd/mm/yyyy and German as dd.mm.yyyy', () => {
    expect(formatDate(MARCH_5, 'en')).toBe('05/03/2024');
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
  });
  it('adds the time in the locale’s form', () => {
    expect(formatDateTime(MARCH_5, 'en')).toBe('05/03/2024, 14:30');
    expect(formatDateTime(MARCH_5, 'de')).toBe('05.03.2024, 14:30');
  });
  it('to the second where it matters (outbox, activity)', () => {
    expect(formatDateTimeSeconds(MARCH_5, 'en')).toBe('05/03/2024, 14:30:07');
    expect(formatDateTimeSeconds(MARCH_5, 'de')).toBe('05.03.2024, 14:30:07');
    expect(formatTimeSeconds(MARCH_5, 'de')).toBe('14:30:07');
  });
});
