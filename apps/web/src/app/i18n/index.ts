import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';

// One language today; the table shape is the one place new languages would plug in.
void i18n.use(initReactI18next).init({
  lng: 'en',
  fallbackLng: 'en',
  resources: { en: { translation: en } },
  interpolation: { escapeValue: false },
  returnObjects: true,
});

export { i18n };
