import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * API tests run on PGlite always and, when TEST_DATABASE_URL is set, a second time on that PostgreSQL
 * server (a fresh database per test file).
 */
const projects = [
  { extends: true as const, test: { name: 'api-pglite', env: { TEST_DB_KIND: 'pglite' } } },
  ...(process.env.TEST_DATABASE_URL
    ? [{ extends: true as const, test: { name: 'api-postgres', env: { TEST_DB_KIND: 'postgres' }, include: ['src/**/*.test.ts'], exclude: ['src/plugins/storage/**', 'src/plugins/mailer/**'] } }]
    : []),
];

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['test/scale/**', '**/node_modules/**'],
    // One migrated database per run, which every test file's database is a copy of.
    globalSetup: ['test/global-setup.ts'],
    // Caps for a hang, not budgets. A test file's database is a copy of one migrated once (globalSetup), so
    // making an app is no longer what a hook waits on longest: tests that run the built service or npm as
    // child processes (start-script, downloads, devices-integration) are, and they give those 50 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on CI's two. A test file spends much of its
    // time waiting on PostgreSQL, the broker or a child process, so two keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects,
  },
});
