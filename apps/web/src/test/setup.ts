import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeAll } from 'vitest';
import { loadAppPageTexts, setLanguage } from '../app/i18n';
import { hideSaved } from '../components/ui/saved-notice';
import { takeContractDrifts } from './contract-bodies';

// The suite's browser reads British English (jsdom says en-US): English dates follow the browser's English
// (lib/dates.ts), and the tests read them as dd/mm/yyyy; lib/dates.test.ts tries the others.
Object.defineProperty(navigator, 'languages', { configurable: true, get: () => ['en-GB', 'en'] });
// …and so do its own date pickers (lib/dates pickerFormat).
Object.defineProperty(navigator, 'language', { configurable: true, get: () => 'en-GB' });

// What a test waits for (findBy…, waitFor) may take a loaded 2-core host more than the default second to
// render; a hang is still caught by the test's own time-out.
configure({ asyncUtilTimeout: 5_000 });

// Pages render as their routes load them: the signed-in pages with their strings.
beforeAll(() => loadAppPageTexts());

afterEach(async () => {
  // A fake fetch answer that is not what the contract says fails its test, even if the page coped with the error.
  const drifts = takeContractDrifts();
  cleanup();
  hideSaved();
  await setLanguage('en');
  localStorage.clear();
  if (drifts.length > 0) throw new Error(drifts.join('\n\n'));
});
