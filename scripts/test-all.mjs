#!/usr/bin/env node
// `npm test`: every suite of the repository, then ONE summary line `N passed, N failed` that CI reads, with
// each suite's wall and CPU time above it. Each suite writes a JSON report; we sum those, never scrape text.
// A suite that crashes before writing its report counts as one failure, so nothing fails silently.
// Suites run side by side where one leaves a core idle that the other can use (see `together` and the plan
// at the bottom); the CPU time printed for each (user + sys of it and its children) shows where that holds.
import { spawn } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { failureLine, fileResults } from './vitest-report.mjs';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.test-results');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

const only = process.argv.slice(2);
const results = [];
/** What did not run, and why: printed right above the summary line, so a green line never hides it. */
const notRun = [];
const failures = [];
const allStarted = Date.now();

/** Set inside `together`: a suite's output is kept and printed whole when it ends, never interleaved. */
const sideBySide = new AsyncLocalStorage();

/**
 * The command under bash, which prints its children's CPU time (`times`) to a pipe of its own when it
 * ends: the suite's user + sys, grandchildren that were waited for included (vitest's workers, the
 * browser and the service under Playwright). The command itself does not get that pipe (3>&-), so nothing
 * it leaves running can hold it open.
 */
const CPU_WRAPPER = '"$@" 3>&-; status=$?; times >&3; exit $status';
/** How long output may still come after the suite exited, from a process it left behind holding its pipes. */
const OUTPUT_GRACE_MS = 5_000;

function parseTimes(text) {
  // `times` prints the shell's own user/sys line, then its children's: "0m12.345s 0m1.234s".
  const line = text.trim().split('\n').at(-1) ?? '';
  const secs = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map(([, m, s]) => Number(m) * 60 + Number(s));
  return secs.length === 2 ? Math.round(secs[0] + secs[1]) : undefined;
}

async function run(name, cmd, args, opts = {}) {
  if (only.length && !only.includes(name)) return null;
  const header = `\n━━ ${name}: ${cmd} ${args.join(' ')}`;
  const buffer = sideBySide.getStore() === true;
  if (!buffer) console.log(header);
  const started = Date.now();
  const stdio = [buffer ? 'ignore' : 'inherit', buffer ? 'pipe' : 'inherit', buffer ? 'pipe' : 'inherit', 'pipe'];
  const child = spawn('bash', ['-c', CPU_WRAPPER, 'bash', cmd, ...args], { stdio, cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env } });
  const output = [];
  const times = [];
  child.stdout?.on('data', (chunk) => output.push(chunk));
  child.stderr?.on('data', (chunk) => output.push(chunk));
  child.stdio[3].on('data', (chunk) => times.push(chunk));
  const status = await new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
    // A daemon a test started (Erlang's epmd, say) may keep the output pipes open long after the suite
    // ended: the suite's result is its exit, and what it printed comes first.
    child.on('exit', (code) => {
      setTimeout(() => {
        for (const stream of child.stdio) stream?.destroy();
        resolve(code ?? 1);
      }, OUTPUT_GRACE_MS).unref();
    });
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (buffer) {
    console.log(header);
    process.stdout.write(Buffer.concat(output));
  }
  return { status, seconds, cpu: parseTimes(Buffer.concat(times).toString()) };
}

/**
 * Runs the suites side by side; their results are listed in the order given, whichever ends first. A suite
 * may be a chain (one async function running several in turn): each still reports on its own.
 */
async function together(...suites) {
  const started = suites.map((suite) => {
    const mine = [];
    return sideBySide.run(true, () => suite((r) => mine.push(r))).then(() => mine);
  });
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
    const files = fileResults(json, path.join(root, dir));
    passed = json.numPassedTests;
    // A file that failed to load has no test results; it counts once. (Vitest's numFailedTestSuites also
    // counts each failing describe block, so it is not used.)
    failed = json.numFailedTests + files.filter((f) => f.didNotLoad).length;
    skipped = json.numPendingTests + json.numTodoTests;
    // The files with skipped tests, each with how many: where to look for the skipIf and its reason.
    if (skipped > 0) notRun.push(`${skipped} tests skipped in ${name} (${files.filter((f) => f.skipped > 0).map((f) => `${f.file}: ${f.skipped}`).join(', ')})`);
    for (const f of files) for (const x of f.failures) failures.push(`${name}: ${f.file} ${f.didNotLoad ? 'did not load' : `› ${x.test}`}: ${x.message}`);
  } catch {
    [passed, failed, skipped] = [0, 1, 0];
  }
  if (r.status !== 0 && failed === 0) failed = 1;
  onResult({ name, passed, failed, skipped, seconds: r.seconds, cpu: r.cpu });
}

async function stepSuite(name, cmd, args, onResult = (r) => results.push(r)) {
  const r = await run(name, cmd, args);
  if (!r) return;
  onResult({ name, passed: r.status === 0 ? 1 : 0, failed: r.status === 0 ? 0 : 1, skipped: 0, seconds: r.seconds, cpu: r.cpu });
}

async function playwrightSuite(name, onResult = (r) => results.push(r)) {
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
  onResult({ name, passed, failed, skipped, seconds: r.seconds, cpu: r.cpu });
}

// Each unexpected Playwright result as "file › title: first line of its error".
function playwrightFailures(suites = []) {
  return suites.flatMap((suite) => [
    ...(suite.specs ?? []).flatMap((spec) =>
      spec.tests
        .filter((t) => t.status === 'unexpected')
        .map((t) => `${spec.file} › ${spec.title}: ${failureLine(t.results.at(-1)?.error?.message)}`),
    ),
    ...playwrightFailures(suite.suites),
  ]);
}

const promtool =
  'promtool check rules deploy/prometheus/alerts.yml && promtool test rules deploy/prometheus/alerts.test.yml && promtool check config deploy/prometheus/prometheus.yml';
const withDatabase = Boolean(process.env.TEST_DATABASE_URL);

// 1. The static checks, the packages' suites and the build (which scale-out and e2e need) side by side, in
//    four lines at most, so no more than four processes share the two cores: typecheck (the longest, one
//    core), the other checks in turn, the packages' suites in turn (one worker each, the device's mostly
//    waiting on its broker and CLI processes) and the build (mostly waiting on npm pack and the disk).
//    Nothing here reads what the build writes (dist/ is ignored by the checks; the device package is
//    packed from a copy).
await together(
  (report) => stepSuite('typecheck', 'npm', ['run', 'typecheck', '--silent'], report),
  async (report) => {
    await stepSuite('lint', 'npx', ['eslint', '.'], report);
    await stepSuite('knip', 'npx', ['knip', '--no-progress'], report);
    // The declared Node floor covers every locked package's engines.node (scripts/check-engines.mjs).
    await stepSuite('engines', 'node', ['scripts/check-engines.mjs'], report);
    // deploy/prometheus: the alert rules and the scrape config as Prometheus reads them (Debian's prometheus package).
    await stepSuite('promtool', 'sh', ['-c', promtool], report);
  },
  // The device's suite first: its CLI tests start processes of their own, the longest wait of the three.
  async (report) => {
    await vitestSuite('device', 'packages/device', [], report);
    await vitestSuite('contract', 'packages/contract', [], report);
    await vitestSuite('email', 'packages/email', [], report);
  },
  async (report) => {
    await stepSuite('build', 'npm', ['run', 'build', '--silent'], report);
    await stepSuite('bundle-size', 'node', ['bench/bundle-size.mjs', '--check'], report);
  },
);
// 2. The API suite keeps both cores busy with its own two workers.
await vitestSuite('api', 'apps/api');
// Without TEST_DATABASE_URL the api suite runs on PGlite only (apps/api/vitest.config.ts), and PostgreSQL-only cases are skipped.
if (!withDatabase && (!only.length || only.includes('api'))) notRun.push('api on PostgreSQL (no TEST_DATABASE_URL: PGlite only)');
// 3. The web suite, with real processes of the built service on PostgreSQL, s3rver and Redis beside it:
//    those mostly wait on each other, the web suite's workers fill the time.
await together(
  (report) => vitestSuite('web', 'apps/web', [], report),
  async (report) => {
    if (withDatabase) await vitestSuite('scale-out', 'apps/api', ['--config', 'vitest.scale.config.ts'], report);
    else if (!only.length || only.includes('scale-out')) notRun.push('scale-out, faults and rolling restart (no TEST_DATABASE_URL)');
  },
);
// 4. The journeys: two browsers and the service keep both cores busy.
if (fs.existsSync(path.join(root, 'playwright.config.ts'))) await playwrightSuite('e2e');

console.log(`\n━━ summary (${Math.round((Date.now() - allStarted) / 1000)}s in all)`);
for (const r of results) {
  const cpu = r.cpu === undefined ? '' : `, ${r.cpu}s CPU`;
  console.log(`  ${r.name.padEnd(12)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(4)} failed ${r.skipped ? `${r.skipped} skipped ` : ''}(${r.seconds}s${cpu})`);
}
const passed = results.reduce((s, r) => s + r.passed, 0);
const failed = results.reduce((s, r) => s + r.failed, 0);
if (notRun.length) console.log(`skipped: ${notRun.join('; ')}`);
// The failing tests by name, next to the line CI reads, so that a red run says what to look at.
for (const f of failures) console.log(`failed: ${stripVTControlCharacters(f)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
