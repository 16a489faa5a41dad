import { describe, expect, it } from 'vitest';
import i18n from 'i18next';
import { setLanguage } from '../../../app/i18n';
import { describeAccess, formatLogTime } from './format';

const at = (d: Date) => d.getTime() / 1000;
const MARCH_5 = at(new Date(2024, 2, 5, 14, 30, 7));

describe('lock page dates, in the reader’s language', () => {
  it('a log entry of today by its time, an older one with its date', () => {
    const sameDay = new Date(2024, 2, 5, 18).getTime();
    expect(formatLogTime(MARCH_5, 'en', sameDay)).toBe('14:30:07');
    expect(formatLogTime(MARCH_5, 'de', sameDay + 86_400_000)).toBe('05.03.2024, 14:30');
    expect(formatLogTime(MARCH_5, 'en', sameDay + 86_400_000)).toBe('05/03/2024, 14:30');
  });

  it('a share’s start and end', async () => {
    await setLanguage('de');
    const text = describeAccess({ start: MARCH_5, end: null, timeWindow: null }, i18n.t, 'de');
    expect(text).toContain('05.03.2024, 14:30');
  });
});
