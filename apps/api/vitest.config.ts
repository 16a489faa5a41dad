import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const include = ['src/**/*.test.ts', 'test/**/*.test.ts'];
const exclude = ['test/scale/**', '**/node_modules/**'];

/**
 * Test files share a worker's loaded modules (isolate: false): a file then imports the app, Fastify,
 * drizzle and PGlite only when its worker has not already, which was most of the suite's time. A file
 * that changes what the process shares runs in a fresh worker of its own (isolate: true), so no other
 * file sees the change and it sees none of theirs. The rule is read from each file's text, so a new file
 * falls under it without being listed: it is isolated when it
 * - starts OpenTelemetry or uses its API (global providers, and instrumentations that only patch http, pg
 *   and Fastify when they load after them),
 * - mocks a module or resets the module registry (vi.mock, vi.doMock, vi.resetModules),
 * - stubs a global or an environment variable, or assigns or deletes one in process.env,
 * - or says `@vitest-isolate` in a comment (anything else process-wide: add the marker).
 * Spies on objects a file made itself (vi.spyOn on its app) and fake timers undone in afterEach stay shared.
 * The shared files' outcome does not depend on the order in which a worker runs them (checked with
 * --sequence.shuffle.files and a few seeds; tests inside a file may build on the ones before them).
 */
const processWide =
  /@opentelemetry|startTracing|\bvi\.(mock|doMock|unmock|resetModules|stubGlobal|stubEnv)\(|process\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=|\|\|=)|delete process\.env|@vitest-isolate/;

const root = import.meta.dirname;
const testFiles = fs
  .globSync(include, { cwd: root, exclude: (f) => f.startsWith('test/scale') || f.includes('node_modules') })
  .map((f) => f.split(path.sep).join('/'))
  .sort();
const isolated = testFiles.filter((f) => processWide.test(fs.readFileSync(path.join(root, f), 'utf8')));

/**
 * A file runs a second time on PostgreSQL only when the database it gets depends on the project: when it,
 * or a module of test/ it imports, makes its app or database through test/helpers.ts or
 * test/fixtures/scratch-database.ts, or reads which database to use. Any other file (pure functions, a
 * service started without a database of its own, config files) would run the same twice.
 */
const choosesDatabase = /createTestApp|testDbKind|TEST_DB_KIND|TEST_DATABASE_URL|scratchPostgres/;
const testDir = path.join(root, 'test');
function usesProjectDatabase(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  if (choosesDatabase.test(text)) return true;
  // Relative imports of test/'s own modules (fixtures), written with .js as TypeScript wants.
  for (const [, spec = ''] of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
    if (target.startsWith(testDir + path.sep) && fs.existsSync(target) && usesProjectDatabase(target, seen)) return true;
  }
  return false;
}
const sameOnEveryDatabase = testFiles.filter((f) => !usesProjectDatabase(path.join(root, f)));

/**
 * API tests run on PGlite always and, when TEST_DATABASE_URL is set, a second time on that PostgreSQL
 * server (a fresh database per test file): both in one run, so its workers stay busy from the first file
 * to the last. Each database has a project of shared files and one of isolated files (see above).
 */
function projects(name: string, kind: 'pglite' | 'postgres', leaveOut: string[] = []) {
  const env = { TEST_DB_KIND: kind };
  // include and exclude are set here only: a project's arrays are added to the root's, not put in their place.
  return [
    { extends: true as const, test: { name, env, isolate: false, include, exclude: [...exclude, ...leaveOut, ...isolated] } },
    // An empty include would mean vitest's default pattern, not no files.
    ...(isolated.length ? [{ extends: true as const, test: { name: `${name}-isolated`, env, isolate: true, include: isolated, exclude: [...exclude, ...leaveOut] } }] : []),
  ];
}

export default defineConfig({
  test: {
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
    projects: [
      ...projects('api-pglite', 'pglite'),
      // Storage and mail touch no database, nor does a file that runs the same on any (above): once, on
      // PGlite, is enough.
      ...(process.env.TEST_DATABASE_URL ? projects('api-postgres', 'postgres', ['src/plugins/storage/**', 'src/plugins/mailer/**', ...sameOnEveryDatabase]) : []),
    ],
  },
});
