import { describe, expect, it } from 'vitest';
import { formatDate, formatDateTime } from './dates';

const MARCH_5 = new Date(2024, 2, 5, 14, 30).getTime() / 1000;

describe('formatDate', () => {
  it('writes English as dd/mm/yyyy and German as dd.mm.yyyy', () => {
    expect(formatDate(MARCH_5, 'en')).toBe('05/03/2024');
    expect(formatDate(MARCH_5, 'de')).toBe('05.03.2024');
  });
  it('adds the time in the locale’s form', () => {
    expect(formatDateTime(MARCH_5, 'en')).toBe('05/03/2024, 14:30');
    expect(formatDateTime(MARCH_5, 'de')).toBe('05.03.2024, 14:30');
  });
});
