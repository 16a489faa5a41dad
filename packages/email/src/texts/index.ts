import { LANGUAGES, type Language } from '@latchkey/contract';
import { de } from './de.js';
import { en, type EmailTexts } from './en.js';

export type { EmailTexts };

const tables: Record<Language, EmailTexts> = { en, de };

export function emailTexts(language: Language = 'en'): EmailTexts {
  return tables[language];
}

/**
 * The first language of an Accept-Language header that emails are written in, else English. Weights are
 * ignored: browsers list languages best first.
 */
export function pickLanguage(acceptLanguage: string | undefined | null): Language {
  for (const part of (acceptLanguage ?? '').split(',')) {
    const primary = part.split(';')[0]!.trim().slice(0, 2).toLowerCase();
    if ((LANGUAGES as readonly string[]).includes(primary)) return primary as Language;
  }
  return 'en';
}
