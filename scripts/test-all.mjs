#!/usr/bin/env node
// `npm test`: every suite of the repository, then ONE summary line `N passed, N failed` that CI reads, with
// each suite's wall time above it. Each suite writes a JSON report; we sum those, never scrape text.
// A suite that crashes before writing its report counts as one failure, so nothing fails silently.
// Suites run one after another, except small ones that run side by side (see `together`): each of those
// is single-threaded, so on two cores two of them take the time of one.
import { spawn } from 'node:child_process';
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

/** Set while suites run side by side: their output is kept and printed whole when each ends. */
let buffered = false;

async function run(name, cmd, args, opts = {}) {
  if (only.length && !only.includes(name)) return null;
  const header = `\n━━ ${name}: ${cmd} ${args.join(' ')}`;
  const buffer = buffered;
  if (!buffer) console.log(header);
  const started = Date.now();
  const child = spawn(cmd, args, { stdio: buffer ? ['ignore', 'pipe', 'pipe'] : 'inherit', cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env } });
  const output = [];
  child.stdout?.on('data', (chunk) => output.push(chunk));
  child.stderr?.on('data', (chunk) => output.push(chunk));
  const status = await new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (buffer) {
    console.log(header);
    process.stdout.write(Buffer.concat(output));
  }
  return { status, seconds };
}

/**
 * Runs the suites side by side; their results are listed in the order given, whichever ends first.
 */
async function together(...suites) {
  buffered = true;
  const started = suites.map((suite) => {
    const mine = [];
    return suite((r) => mine.push(r)).then(() => mine);
  });
  buffered = false;
  for (const mine of await Promise.all(started)) results.push(...mine);
}

async function vitestSuite(name, dir, extraArgs = [], onResult = (r) => results.push(r)) {
  const report = path.join(out, `${name}.json`);
  const r = await run(name, 'npx', ['vitest', 'run', ...extraArgs, '--reporter=default', '--reporter=json', `--outputFile=${report}`], {
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
  onResult({ name, passed, failed, skipped, seconds: r.seconds });
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

async function stepSuite(name, cmd, args, onResult = (r) => results.push(r)) {
  const r = await run(name, cmd, args);
  if (!r) return;
  onResult({ name, passed: r.status === 0 ? 1 : 0, failed: r.status === 0 ? 0 : 1, skipped: 0, seconds: r.seconds });
}

async function playwrightSuite(name) {
  const report = path.join(out, `${name}.json`);
  const r = await run(name, 'npx', ['playwright', 'test', '--reporter=list,json'], {
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

// The static checks, each single-threaded, side by side.
await together(
  (report) => stepSuite('typecheck', 'npm', ['run', 'typecheck', '--silent'], report),
  (report) => stepSuite('lint', 'npx', ['eslint', '.'], report),
  (report) => stepSuite('knip', 'npx', ['knip', '--no-progress'], report),
  // The declared Node floor covers every locked package's engines.node (scripts/check-engines.mjs).
  (report) => stepSuite('engines', 'node', ['scripts/check-engines.mjs'], report),
  // deploy/prometheus: the alert rules and the scrape config as Prometheus reads them (Debian's prometheus package).
  (report) =>
    stepSuite('promtool', 'sh', ['-c', 'promtool check rules deploy/prometheus/alerts.yml && promtool test rules deploy/prometheus/alerts.test.yml && promtool check config deploy/prometheus/prometheus.yml'], report),
);
// The packages' suites are small: side by side too.
await together(
  (report) => vitestSuite('contract', 'packages/contract', [], report),
  (report) => vitestSuite('email', 'packages/email', [], report),
  (report) => vitestSuite('device', 'packages/device', [], report),
);
await vitestSuite('api', 'apps/api');
await vitestSuite('web', 'apps/web');
await stepSuite('build', 'npm', ['run', 'build', '--silent']);
await stepSuite('bundle-size', 'node', ['bench/bundle-size.mjs', '--check']);
// Real processes of the built service on PostgreSQL, s3rver and Redis; needs TEST_DATABASE_URL.
if (process.env.TEST_DATABASE_URL) await vitestSuite('scale-out', 'apps/api', ['--config', 'vitest.scale.config.ts']);
else if (!only.length || only.includes('scale-out')) notRun.push('scale-out, faults and rolling restart (no TEST_DATABASE_URL)');
// Without TEST_DATABASE_URL the api suite runs on PGlite only (apps/api/vitest.config.ts), and PostgreSQL-only cases are skipped.
if (!process.env.TEST_DATABASE_URL && (!only.length || only.includes('api'))) notRun.push('api on PostgreSQL (no TEST_DATABASE_URL: PGlite only)');
if (fs.existsSync(path.join(root, 'playwright.config.ts'))) await playwrightSuite('e2e');

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
