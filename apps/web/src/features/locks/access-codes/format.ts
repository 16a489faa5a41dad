import type { TFunction } from 'i18next';
import { formatDateTime } from '../../../lib/dates';
import type { AccessCode } from '@latchkey/contract';

/** When a code holds, in words and in the reader's language: "05.03.2024, 14:00 to 06.03.2024, 14:00", "From …, no end". */
export function describeWindow(code: Pick<AccessCode, 'start' | 'end'>, t: TFunction, language: string): string {
  const start = code.start === null ? null : formatDateTime(code.start, language);
  const end = code.end === null ? null : formatDateTime(code.end, language);
  if (start && end) return t('accessCodes.window.both', { start, end });
  if (start) return t('accessCodes.window.from', { start });
  if (end) return t('accessCodes.window.until', { end });
  return t('accessCodes.window.always');
}
