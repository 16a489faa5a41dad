// One flat config for the whole repository. The folder-boundary rules live here:
// packages import no app; web features don't import each other; only apps/api/src/config.ts reads process.env.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A flat-config block that forbids `files` from importing anything matching one of `patterns`. */
function boundary(files, patterns) {
  return { files, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}
const NO_APPS = { group: ['**/apps/**', '@latchkey/api', '@latchkey/web'], message: 'Packages import no app.' };
const NO_API = { group: ['**/apps/api/**', '@latchkey/api'], message: 'The portal talks to the API over HTTP only.' };

// Web features don't import each other: what two features share lives in components/ or lib/, and only
// the app shell (src/app) puts features together. One block per folder under features/, read from disk.
const WEB_FEATURES = readdirSync(`${import.meta.dirname}/apps/web/src/features`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** An import pattern matching another feature than `own`, by a relative path or through features/. */
function otherFeature(own, allowed = []) {
  const others = WEB_FEATURES.filter((name) => name !== own).join('|');
  const except = allowed.map((path) => `(?!${path.replaceAll('.', '\\.')}$)`).join('');
  return {
    regex: `^${except}((\\.\\./)+(${others})(/|$)|.*(^|/)features/(?!${own}/))`,
    message: `Features don't import each other: move what ${own}/ shares to components/ or lib/.`,
  };
}
const featureBoundaries = WEB_FEATURES.map((own) => boundary([`apps/web/src/features/${own}/**`], [NO_API, otherFeature(own)]));

// API modules use each other only through a service's exports (x.service.ts or an index.ts), never through
// routes or internals; what two modules share otherwise lives in src/lib/. One block per folder under
// modules/, read from disk, so a file in a nested folder (devices/runtime/) is held to it at any depth.
const NO_WEB = { group: ['**/apps/web/**', '@latchkey/web'], message: 'The API does not import the portal.' };
const API_MODULES = readdirSync(`${import.meta.dirname}/apps/api/src/modules`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** An import pattern reaching into another module than `own` (by `../`s or through modules/), not its service. */
function otherModule(own) {
  const others = API_MODULES.filter((name) => name !== own).join('|');
  return {
    regex: `^((\\.\\./)+|.*(^|/)modules/)(${others})/(?![a-z0-9-]+\\.service\\.js$|index\\.js$)`,
    message: "API modules use each other only through a service's exports (x.service.ts, index.ts): move what they share to src/lib/.",
  };
}
const moduleBoundaries = API_MODULES.map((own) => boundary([`apps/api/src/modules/${own}/**`], [NO_WEB, otherModule(own)]));

// Comments and test titles state the rule or the behaviour, never where it came from: no tracker issue
// number, spec section or numbered review finding. An RFC's section stays (a reference, not provenance),
// and so does a link to a third-party project's issue (`…/issues/123` has no space before the number).
const PROVENANCE = /\bissues?[ -]#?\d+|\bspec §|(?<!RFC \d+ )§ ?\d|\bred[- ]team finding/i;
const TEST_FUNCTIONS = new Set(['describe', 'it', 'test']);
const noProvenance = {
  meta: { type: 'suggestion', schema: [], messages: { provenance: 'State the rule or the behaviour, not where it came from ("{{ found }}").' } },
  create(context) {
    const check = (text, loc) => {
      const found = PROVENANCE.exec(text)?.[0];
      if (found) context.report({ loc, messageId: 'provenance', data: { found } });
    };
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) check(comment.value, comment.loc);
      },
      // A title is the first argument of describe, it or test, also as test.describe or it.skip (not it.each(…)(…)).
      CallExpression(node) {
        let callee = node.callee;
        while (callee.type === 'MemberExpression') callee = callee.object;
        if (callee.type !== 'Identifier' || !TEST_FUNCTIONS.has(callee.name)) return;
        const title = node.arguments[0];
        if (title?.type === 'Literal' && typeof title.value === 'string') check(title.value, title.loc);
        if (title?.type === 'TemplateLiteral') check(title.quasis.map((q) => q.value.cooked ?? '').join(''), title.loc);
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.data/**', 'test-results/**', 'playwright-report/**', '.test-results/**', 'apps/api/drizzle/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  { plugins: { latchkey: { rules: { 'no-provenance': noProvenance } } }, rules: { 'latchkey/no-provenance': 'error' } },
  // Folder boundaries. ESLint replaces (does not merge) a rule set again for the same file, so the
  // narrower zones repeat the wider zone's groups.
  boundary(['packages/email/**'], [NO_APPS]),
  boundary(['packages/contract/**'], [NO_APPS, { group: ['**/packages/email/**', '@latchkey/email'], message: 'The contract imports nothing of ours.' }]),
  boundary(['apps/api/**'], [NO_WEB]),
  ...moduleBoundaries,
  boundary(['apps/web/**'], [NO_API]),
  ...featureBoundaries,
  // The backend unlock guide offers the application's key generator in place; that button needs the
  // application's key list and cache, so it stays in applications/.
  boundary(['apps/web/src/features/locks/guide/unlock-guide.tsx'], [NO_API, otherFeature('locks', ['../../applications/overview/generate-key-dialog'])]),
  boundary(['apps/web/src/components/**', 'apps/web/src/lib/**'], [NO_API, { group: ['**/features/**', '**/app/**'], message: 'Shared UI and lib/ do not depend on features or the app shell.' }]),
  {
    files: ['apps/api/src/**/*.ts'],
    ignores: ['apps/api/src/config.ts', 'apps/api/src/**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through src/config.ts.' }],
    },
  },
  // An API function longer than 80 lines is split into named steps, or says beside it, in its disable
  // comment, why it is one piece.
  {
    files: ['apps/api/src/**/*.ts'],
    ignores: ['apps/api/src/**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', 'e2e/**', 'bench/**', 'scripts/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
  },
);
