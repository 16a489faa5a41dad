import { globSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

const TESTS = 'src/**/*.test.{ts,tsx}';
// A file that replaces a module (vi.mock) or loads modules afresh (vi.resetModules) needs a module graph of
// its own: in a shared one the module may already be loaded unmocked, and a mock or a reset would reach the
// files after it.
const OWN_MODULES = globSync(TESTS, { cwd: import.meta.dirname }).filter((file) =>
  /\bvi\.(mock|doMock|resetModules)\(/.test(readFileSync(new URL(file, import.meta.url), 'utf8')),
);

export default defineConfig({
  plugins: [react()],
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    // Component tests type and click through whole dialogs; on a loaded 2-core CI host one took 5.1 s.
    testTimeout: 20_000,
    // Vitest's default is one worker fewer than the cores: one on CI's two, leaving a core idle while
    // jsdom renders; the main process does little besides collecting results.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Worker threads, not child processes: a thread starts and sets up cheaper than a process.
    pool: 'threads',
    restoreMocks: true,
    unstubGlobals: true,
    projects: [
      {
        extends: true,
        // The files of a worker share one jsdom and the modules they load (MUI, i18n, the contract): each
        // file importing them afresh was most of the suite's CPU time. test/setup.ts puts back what a test
        // may change after every test, so each file starts as the first one did.
        test: { name: 'shared', include: [TESTS], exclude: OWN_MODULES, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: OWN_MODULES } },
    ],
  },
});
