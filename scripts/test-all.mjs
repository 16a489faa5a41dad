#!/usr/bin/env node
// `npm test`: every suite of the repository, one after another, then ONE summary line
// `N passed, N failed` that CI reads. Each suite writes a JSON report; we sum those, never scrape text.
// A suite that crashes before writing its report counts as one failure, so nothing fails silently.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.test-results');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

const only = process.argv.slice(2);
const results = [];
/** What did not run, and why: printed right above the summary line, so a green line never hides it. */
const notRun = [];
const failures = [];

function run(name, cmd, args, opts = {}) {
  if (only.length && !only.includes(name)) return null;
  console.log(`\n━━ ${name}: ${cmd} ${args.join(' ')}`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env } });
  return { status: r.status ?? 1, seconds: Math.round((Date.now() - started) / 1000) };
}

function vitestSuite(name, dir, extraArgs = []) {
  const report = path.join(out, `${name}.json`);
  const r = run(name, 'npx', ['vitest', 'run', ...extraArgs, '--reporter=default', '--reporter=json', `--outputFile=${report}`], {
    cwd: path.join(root, dir),
  });
  if (!r) return;
  let passed, failed, skipped;
  try {
    const json = JSON.parse(fs.readFileSync(report, 'utf8'));
    passed = json.numPassedTests;
    failed = json.numFailedTests + countFilesThatFailedToLoad(json);
    skipped = json.numPendingTests + json.numTodoTests;
    if (skipped > 0) notRun.push(`${skipped} tests skipped in ${name} (${skippedFiles(json, dir).join(', ')})`);
    for (const f of json.testResults) {
      const file = path.relative(path.join(root, dir), f.name);
      const failing = f.assertionResults.filter((a) => a.status === 'failed');
      if (f.status === 'failed' && failing.length === 0) failures.push(`${name}: ${file} did not load: ${firstLine(f.message)}`);
      for (const a of failing) failures.push(`${name}: ${file} › ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
    }
  } catch {
    [passed, failed, skipped] = [0, 1, 0];
  }
  if (r.status !== 0 && failed === 0) failed = 1;
  results.push({ name, passed, failed, skipped, seconds: r.seconds });
}

// The first line of a failure message, short enough for the lines CI shows around the summary.
function firstLine(message = '') {
  const line = String(message).split('\n').find((l) => l.trim()) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

// The files with skipped tests, each with how many: where to look for the skipIf and its reason.
function skippedFiles(json, dir) {
  return json.testResults
    .map((f) => [path.relative(path.join(root, dir), f.name), f.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo').length])
    .filter(([, n]) => n > 0)
    .map(([file, n]) => `${file}: ${n}`);
}

// A file that failed to load has no test results; count it once. Files with failing tests are already counted
// by their tests. (Vitest's numFailedTestSuites also counts each failing describe block, so it is not used.)
function countFilesThatFailedToLoad(json) {
  return json.testResults.filter((f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed')).length;
}

function stepSuite(name, cmd, args) {
  const r = run(name, cmd, args);
  if (!r) return;
  results.push({ name, passed: r.status === 0 ? 1 : 0, failed: r.status === 0 ? 0 : 1, skipped: 0, seconds: r.seconds });
}

function playwrightSuite(name) {
  const report = path.join(out, `${name}.json`);
  const r = run(name, 'npx', ['playwright', 'test', '--reporter=list,json'], {
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: report },
  });
  if (!r) return;
  let passed, failed, skipped;
  try {
    const { stats } = JSON.parse(fs.readFileSync(report, 'utf8'));
    passed = stats.expected + stats.flaky;
    failed = stats.unexpected;
    skipped = stats.skipped;
    for (const t of playwrightFailures(JSON.parse(fs.readFileSync(report, 'utf8')).suites)) failures.push(`${name}: ${t}`);
  } catch {
    [passed, failed, skipped] = [0, 1, 0];
  }
  if (r.status !== 0 && failed === 0) failed = 1;
  results.push({ name, passed, failed, skipped, seconds: r.seconds });
}

// Each unexpected Playwright result as "file › title: first line of its error".
function playwrightFailures(suites = []) {
  return suites.flatMap((suite) => [
    ...(suite.specs ?? []).flatMap((spec) =>
      spec.tests
        .filter((t) => t.status === 'unexpected')
        .map((t) => `${spec.file} › ${spec.title}: ${firstLine(t.results.at(-1)?.error?.message)}`),
    ),
    ...playwrightFailures(suite.suites),
  ]);
}

stepSuite('typecheck', 'npm', ['run', 'typecheck', '--silent']);
stepSuite('lint', 'npx', ['eslint', '.']);
stepSuite('knip', 'npx', ['knip', '--no-progress']);
// The declared Node floor covers every locked package's engines.node (scripts/check-engines.mjs).
stepSuite('engines', 'node', ['scripts/check-engines.mjs']);
vitestSuite('contract', 'packages/contract');
vitestSuite('email', 'packages/email');
vitestSuite('device', 'packages/device');
vitestSuite('api', 'apps/api');
vitestSuite('web', 'apps/web');
stepSuite('build', 'npm', ['run', 'build', '--silent']);
stepSuite('bundle-size', 'node', ['bench/bundle-size.mjs', '--check']);
// deploy/prometheus: the alert rules and the scrape config as Prometheus reads them (Debian's prometheus package).
stepSuite('promtool', 'sh', ['-c', 'promtool check rules deploy/prometheus/alerts.yml && promtool test rules deploy/prometheus/alerts.test.yml && promtool check config deploy/prometheus/prometheus.yml']);
// Real processes of the built service on PostgreSQL, s3rver and Redis; needs TEST_DATABASE_URL.
if (process.env.TEST_DATABASE_URL) vitestSuite('scale-out', 'apps/api', ['--config', 'vitest.scale.config.ts']);
else if (!only.length || only.includes('scale-out')) notRun.push('scale-out, faults and rolling restart (no TEST_DATABASE_URL)');
// Without TEST_DATABASE_URL the api suite runs on PGlite only (apps/api/vitest.config.ts), and PostgreSQL-only cases are skipped.
if (!process.env.TEST_DATABASE_URL && (!only.length || only.includes('api'))) notRun.push('api on PostgreSQL (no TEST_DATABASE_URL: PGlite only)');
if (fs.existsSync(path.join(root, 'playwright.config.ts'))) playwrightSuite('e2e');

console.log('\n━━ summary');
for (const r of results) {
  console.log(`  ${r.name.padEnd(12)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(4)} failed ${r.skipped ? `${r.skipped} skipped ` : ''}(${r.seconds}s)`);
}
const passed = results.reduce((s, r) => s + r.passed, 0);
const failed = results.reduce((s, r) => s + r.failed, 0);
if (notRun.length) console.log(`skipped: ${notRun.join('; ')}`);
// The failing tests by name, next to the line CI reads, so that a red run says what to look at.
for (const f of failures) console.log(`failed: ${stripVTControlCharacters(f)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
