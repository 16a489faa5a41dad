import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeAll } from 'vitest';
import { loadAppPageTexts, setLanguage } from '../app/i18n';
import { hideSaved } from '../components/ui/saved-notice';

// Pages render as their routes load them: the signed-in pages with their strings.
beforeAll(() => loadAppPageTexts());

afterEach(async () => {
  cleanup();
  hideSaved();
  await setLanguage('en');
  localStorage.clear();
});
