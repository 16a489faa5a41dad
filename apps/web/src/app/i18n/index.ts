import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { LANGUAGES, type Language } from './catalogue';
import { en } from './en';

export { LANGUAGES, type Language };

const STORAGE_KEY = 'latchkey.language';

// English is built in (it is the fallback for any missing text); other languages load when chosen, so
// the first page of an English reader carries no other table. i18next merges the tables added later into
// the one it is given: it gets a copy, and `en` stays the English table as written.
void i18n.use(initReactI18next).init({
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES],
  resources: { en: { translation: structuredClone(en) } },
  interpolation: { escapeValue: false },
  returnObjects: true,
});

/**
 * A language's table and the contract's texts in it, with the contract's English texts: lib/server-text.ts
 * looks a server's text up among those. English pages need neither, so they load with another language.
 */
const loaders: Record<
  Exclude<Language, 'en'>,
  () => Promise<{ table: object; contract: object; contractEn: object }>
> = {
  // Another language's table comes whole, the signed-in pages' strings included.
  de: () =>
    import('./de').then((m) => ({
      table: { ...m.de, ...m.appPagesDe },
      contract: m.contractDe,
      contractEn: m.contractEn,
    })),
};

let appPageTexts: Promise<void> | null = null;
/**
 * The English strings of the signed-in pages (app-pages-en.ts), loaded with the signed-in area's layout
 * (router.tsx): the fallback for every language, so they are added to English whichever language is on.
 */
export function loadAppPageTexts(): Promise<void> {
  appPageTexts ??= import('./app-pages-en').then((m) => {
    i18n.addResourceBundle('en', 'translation', m.appPagesEn, true, false);
  });
  return appPageTexts;
}

function isLanguage(value: unknown): value is Language {
  return LANGUAGES.includes(value as Language);
}

/** The remembered choice, else the browser's first language we have, else English. */
export function initialLanguage(): Language {
  try {
    const stored = localStorage.getItem(STORAGE_KEY);
    if (isLanguage(stored)) return stored;
  } catch {
    // Storage blocked (private mode): fall through to the browser's languages.
  }
  const preferred = (navigator.languages ?? [navigator.language]).map((l) => l.slice(0, 2).toLowerCase());
  return preferred.find(isLanguage) ?? 'en';
}

/** Loads the table if needed, switches, sets `<html lang>` and (when the user chose) remembers it. */
export async function setLanguage(language: Language, { remember = false } = {}): Promise<void> {
  // A table is loaded once its contract texts are there: a page's own strings (features/auth/recovery-texts.ts)
  // may have started the language's bundle before.
  if (language !== 'en' && !i18n.getResource(language, 'translation', 'contract')) {
    const loaded = await loaders[language]();
    i18n.addResourceBundle('en', 'translation', { contract: loaded.contractEn }, true, false);
    i18n.addResourceBundle(language, 'translation', { ...loaded.table, contract: loaded.contract });
  }
  await i18n.changeLanguage(language);
  document.documentElement.lang = language;
  if (remember) {
    try {
      localStorage.setItem(STORAGE_KEY, language);
    } catch {
      // Not remembered when storage is blocked; the switch itself still applies.
    }
  }
}

export { i18n };
