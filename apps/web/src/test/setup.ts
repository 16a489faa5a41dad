import '@testing-library/jest-dom/vitest';
import { __unsafe_useEmotionCache as useEmotionCache, type EmotionCache } from '@emotion/react';
import { cleanup, configure, render } from '@testing-library/react';
import { createElement } from 'react';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { loadAppPageTexts, setLanguage } from '../app/i18n';
import { queryClient } from '../app/layouts/query-layout';
import { hideSaved } from '../components/ui/saved-notice';
import { clearSession } from '../lib/session';
import { takeContractDrifts } from './contract-bodies';
import { closeStreams } from './streams';

// The suite's browser reads British English (jsdom says en-US): English dates follow the browser's English
// (lib/dates.ts), and the tests read them as dd/mm/yyyy; lib/dates.test.ts tries the others.
Object.defineProperty(navigator, 'languages', { configurable: true, get: () => ['en-GB', 'en'] });
// …and so do its own date pickers (lib/dates pickerFormat).
Object.defineProperty(navigator, 'language', { configurable: true, get: () => 'en-GB' });

// What a test waits for (findBy…, waitFor) may take a loaded 2-core host more than the default second to
// render: the lock page's Settings card took over 5 s at three times CI's load. A cap for a hang, not a
// budget; the test's own time-out is twice it.
configure({ asyncUtilTimeout: 10_000 });

// Pages render as their routes load them: the signed-in pages with their strings.
beforeAll(() => loadAppPageTexts());

// Every test starts as the first of a fresh page: the test files of a worker share one jsdom and their modules
// (vitest.config.ts), so what a test changes is put back here, not left for the next test or file.
afterEach(async () => {
  // A fake fetch answer that is not what the contract says fails its test, even if the page coped with the error.
  const drifts = takeContractDrifts();
  cleanup();
  // The streams the test left open end once the page reading them has gone, so its reader stops.
  closeStreams();
  vi.useRealTimers();
  hideSaved();
  await setLanguage('en');
  // Storage emptied and the session's cached copy of it with it: the next test is signed out.
  clearSession();
  sessionStorage.clear();
  if (drifts.length > 0) throw new Error(drifts.join('\n\n'));
});

/** The style cache MUI's components write their CSS through (emotion's default one). */
function emotionCache(): EmotionCache {
  let cache: EmotionCache | null = null;
  function Read() {
    cache = useEmotionCache();
    return null;
  }
  render(createElement(Read));
  cleanup();
  if (!cache) throw new Error('emotion has no default cache');
  return cache;
}

// Each file starts as a fresh page: no <html lang> yet, an empty query cache for the guard and the router,
// and no component styles in <head>. Left there, every file's styles would stay for the files after it, and
// what a test does costs more with each: jsdom matches each of those rules whenever a query or a click asks
// for an element's computed style.
afterAll(() => {
  document.documentElement.removeAttribute('lang');
  queryClient.clear();
  const cache = emotionCache();
  cache.sheet.flush();
  for (const name of Object.keys(cache.inserted)) delete cache.inserted[name];
});
