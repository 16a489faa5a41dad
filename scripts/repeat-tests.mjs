#!/usr/bin/env node
// Runs the same Vitest files many times in a row and says, per file, in how many runs every test passed:
// the proof that a test waiting on time, a broker or a child process holds run after run, not once.
//
//   node scripts/repeat-tests.mjs --runs 20 --dir apps/api [--project 'api-pglite*' ...] [--config vitest.scale.config.ts] [file ...]
//
// `--project` may be given several times: each run then runs the files once per project pattern, one after the
// other, and the tally is kept per project pattern and file (Vitest's JSON report does not name the project).
//
// Each run writes Vitest's JSON report; the per-file tally is rebuilt from those reports (never from the text
// output) and written to .test-results/repeat-<label>.json after every run, so a long proof can be read while it
// goes. A run that crashes before writing its report counts as a failed run for every file. Exit 1 when any file
// failed in any run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileResults } from './vitest-report.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '20' },
    dir: { type: 'string', default: 'apps/api' },
    project: { type: 'string', multiple: true, default: [] },
    config: { type: 'string' },
    label: { type: 'string' },
    'max-workers': { type: 'string' },
  },
});

const root = path.resolve(import.meta.dirname, '..');
const cwd = path.join(root, values.dir);
const runs = Number(values.runs);
const label = values.label ?? [path.basename(values.dir), ...values.project].join('-').replace(/[^\w-]+/g, '');
const outDir = path.join(root, '.test-results');
fs.mkdirSync(outDir, { recursive: true });
const tallyFile = path.join(outDir, `repeat-${label}.json`);
const report = path.join(outDir, `repeat-${label}-run.json`);

/** file → { runs, passedRuns, failures: [{ run, test, message }] } */
const tally = new Map();
const history = [];

const projectSets = values.project.length ? values.project : [''];
for (let run = 1; run <= runs; run++) for (const project of projectSets) runOnce(run, project);

function runOnce(run, project) {
  fs.rmSync(report, { force: true });
  const started = Date.now();
  const args = ['vitest', 'run', ...(values.config ? ['--config', values.config] : []), ...(project ? ['--project', project] : []), ...(values['max-workers'] ? [`--maxWorkers=${values['max-workers']}`] : []), '--reporter=dot', '--reporter=json', `--outputFile=${report}`, ...positionals];
  const child = spawnSync('npx', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: process.env, maxBuffer: 64 * 1024 * 1024 });
  const seconds = Math.round((Date.now() - started) / 1000);
  let json;
  try {
    json = JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch {
    history.push({ run, project, seconds, crashed: true, status: child.status, stderr: child.stderr.toString().slice(-2000) });
    for (const [key, entry] of tally) if (key.startsWith(`${project} `)) entry.runs++;
    console.log(`run ${run}/${runs} ${project}: crashed before its report (exit ${child.status}) in ${seconds}s`);
    save();
    return;
  }
  for (const f of fileResults(json, cwd)) {
    const file = `${project} ${f.file}`;
    const entry = tally.get(file) ?? { runs: 0, passedRuns: 0, tests: 0, seconds: [], failures: [] };
    tally.set(file, entry);
    entry.runs++;
    entry.seconds.push(f.seconds);
    entry.tests = f.tests;
    entry.failures.push(...f.failures.map((x) => ({ run, ...x })));
    if (f.passed) entry.passedRuns++;
  }
  history.push({ run, project, seconds, passed: json.numPassedTests, failed: json.numFailedTests, skipped: json.numPendingTests });
  console.log(`run ${run}/${runs} ${project}: ${json.numPassedTests} passed, ${json.numFailedTests} failed, ${json.numPendingTests} skipped in ${seconds}s (${new Date().toISOString().slice(11, 19)})`);
  save();
}

const rows = [...tally].sort(([a], [b]) => a.localeCompare(b));
console.log(`\n${label}: ${runs} runs`);
for (const [file, e] of rows) console.log(`  ${String(e.passedRuns).padStart(3)}/${e.runs}  ${file} (${e.tests} tests)${e.failures.length ? ' FAILED: ' + e.failures.map((f) => `run ${f.run} ${f.test}: ${f.message}`).join(' | ') : ''}`);
const bad = rows.filter(([, e]) => e.passedRuns < e.runs).length + history.filter((h) => h.crashed).length;
console.log(`${rows.length} files, ${bad === 0 ? 'every file passed every run' : `${bad} files or runs failed`}`);
process.exit(bad === 0 ? 0 : 1);

function save() {
  fs.writeFileSync(tallyFile, JSON.stringify({ label, dir: values.dir, project: values.project, files: positionals, history, tally: Object.fromEntries(tally) }, null, 2));
}

