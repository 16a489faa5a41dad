import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { setLanguage } from '../app/i18n';
import { hideSaved } from '../components/ui/saved-notice';

afterEach(async () => {
  cleanup();
  hideSaved();
  await setLanguage('en');
  localStorage.clear();
});
