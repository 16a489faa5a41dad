import 'i18next';
import type { en } from './en';
import type { appPagesEn } from './app-pages-en';

declare module 'i18next' {
  interface CustomTypeOptions {
    // The signed-in pages load their strings with them (app-pages-en.ts): keys of the same table.
    resources: { translation: typeof en & typeof appPagesEn };
  }
}
