import 'i18next';
import type { en } from './en';
import type { appPagesEn } from './app-pages-en';
import type { recoveryTextsEn } from '../../features/auth/recovery-texts';

declare module 'i18next' {
  interface CustomTypeOptions {
    // The signed-in pages load their strings with them (app-pages-en.ts): keys of the same table.
    // The forgot/reset/verify pages add theirs when they load (features/auth/recovery-texts.ts).
    resources: { translation: typeof en & typeof appPagesEn & typeof recoveryTextsEn };
  }
}
