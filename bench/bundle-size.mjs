#!/usr/bin/env node
// Gzip weight of what each route loads first, read from Vite's build manifest (apps/web/dist/.vite/manifest.json):
// the entry's static closure plus the static closure of every lazy route module the URL matches.
// Prints each route against its page-weight budgets. `--check` (run in CI; size is deterministic) fails when a
// route exceeds its CI limit: the budget where it is met, or the size measured when the budget was
// found out of reach with the decided stack (docs/decisions/0003-login-bundle-budget.md) — a ratchet that
// catches every regression while the gap stays visible in this table and in docs/performance.md.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'apps/web/dist');
const manifestPath = path.join(dist, '.vite/manifest.json');
/**
 * /start: the whole route, JS and CSS. /login's 150 KB budget is retired (the decided stack's
 * measured floor is 157 KB, decision 0003); its CI ratchet below stays, and Lighthouse's mobile score on
 * every page (bench/lighthouse.mjs) is the budget that stands for how fast it is.
 */
const BUDGET = { start: { total: 300 * 1024 } };
/** What `--check` enforces. Lower the login figure as levers land; never raise it without a decision record. */
const CI_LIMIT = { login: { js: 196 * 1024 }, start: { total: 300 * 1024 } };
/**
 * Route → the lazy modules react-router loads for it, outermost first (mirrors apps/web/src/app/router.tsx:
 * /start and /:appId/overview render inside the query and protected layouts, overview also in the app shell).
 * Exact keys, not patterns: a renamed module must fail here rather than quietly drop out of the figure.
 */
const ROUTES = {
  login: ['src/features/auth/login-page.tsx'],
  start: [
    'src/app/layouts/query-layout.tsx',
    'src/app/layouts/protected-layout.tsx',
    'src/features/applications/start/start-page.tsx',
  ],
  overview: [
    'src/app/layouts/query-layout.tsx',
    'src/app/layouts/protected-layout.tsx',
    'src/app/layouts/app-shell-layout.tsx',
    'src/features/applications/overview/overview-page.tsx',
  ],
};

if (!fs.existsSync(manifestPath)) {
  console.error(`No build manifest at ${path.relative(root, manifestPath)}: run \`npm run build\` first (vite build.manifest must be on).`);
  process.exit(1);
}
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const gz = (file) => zlib.gzipSync(fs.readFileSync(path.join(dist, file)), { level: 9 }).length;

/** Static closure of a manifest entry: the chunk and its static imports. */
function closure(key, seen = new Set()) {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const dep of manifest[key]?.imports ?? []) closure(dep, seen);
  return seen;
}
/** JS and CSS of a set of chunks, each file counted once. */
function weigh(keys) {
  let js = 0, css = 0;
  const files = new Set();
  for (const k of keys) {
    const chunk = manifest[k];
    if (!files.has(chunk.file)) { files.add(chunk.file); js += gz(chunk.file); }
    for (const c of chunk.css ?? []) if (!files.has(c)) { files.add(c); css += gz(c); }
  }
  return { js, css };
}

const entryKey = Object.keys(manifest).find((k) => manifest[k].isEntry);
const rows = [];
for (const [route, modules] of Object.entries(ROUTES)) {
  const keys = closure(entryKey);
  for (const m of modules) {
    if (!manifest[m]?.isDynamicEntry) {
      console.error(`${m} (route /${route}) is not a lazily loaded module in the manifest: update ROUTES to match router.tsx.`);
      process.exit(1);
    }
    closure(m, keys);
  }
  rows.push({ route, modules, ...weigh(keys) });
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const budgetText = (b) => (b?.js ? `${kb(b.js)} JS` : b?.total ? `${kb(b.total)} all` : '—');
const verdict = (r, b) => (!b ? '' : b.js ? (r.js <= b.js ? 'met' : 'NOT met') : r.js + r.css <= b.total ? 'met' : 'NOT met');
console.log('route      JS (gzip)  CSS (gzip)  budget        verdict  CI limit      lazy modules');
for (const r of rows) {
  const mods = r.modules.map((m) => path.basename(m, '.tsx')).join(' > ');
  const b = BUDGET[r.route];
  console.log(`${r.route.padEnd(10)} ${kb(r.js).padStart(9)}  ${kb(r.css).padStart(10)}  ${budgetText(b).padEnd(12)}  ${verdict(r, b).padEnd(7)}  ${budgetText(CI_LIMIT[r.route]).padEnd(12)}  ${mods}`);
}
if (process.argv.includes('--check')) {
  const over = [];
  for (const r of rows) {
    const b = CI_LIMIT[r.route];
    if (b?.js && r.js > b.js) over.push(`/${r.route} loads ${kb(r.js)} of JS (CI limit ${kb(b.js)})`);
    if (b?.total && r.js + r.css > b.total) over.push(`/${r.route} loads ${kb(r.js + r.css)} of JS and CSS (CI limit ${kb(b.total)})`);
  }
  for (const o of over) console.error(`Budget exceeded: ${o}`);
  process.exit(over.length ? 1 : 0);
}
