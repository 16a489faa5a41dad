// Reading Vitest's JSON report, shared by `npm test` (scripts/test-all.mjs) and scripts/repeat-tests.mjs: both
// count from the report a run wrote, never from the text it printed.
import path from 'node:path';

/**
 * A failure message's first line and where in a test file it was thrown: enough to tell which assertion
 * failed, short enough for the lines CI shows around the summary.
 */
export function failureLine(message = '') {
  const lines = String(message).split('\n');
  const line = lines.find((l) => l.trim()) ?? '';
  const at = lines.find((l) => /\.(test|spec)\.tsx?:\d+/.test(l))?.trim();
  return `${line.length > 300 ? `${line.slice(0, 300)}…` : line}${at ? ` (${at})` : ''}`;
}

/**
 * Each test file of the report with its failures, its path relative to `cwd`. A file that failed without a
 * failing test did not load: it has one failure, '(file did not load)', with the file's own message.
 */
export function fileResults(json, cwd) {
  return json.testResults.map((f) => {
    const failing = f.assertionResults.filter((a) => a.status === 'failed');
    const failures = failing.map((a) => ({ test: a.fullName, message: failureLine(a.failureMessages?.[0]) }));
    const didNotLoad = f.status === 'failed' && failing.length === 0;
    if (didNotLoad) failures.push({ test: '(file did not load)', message: failureLine(f.message) });
    return {
      file: path.relative(cwd, f.name),
      passed: f.status !== 'failed',
      didNotLoad,
      tests: f.assertionResults.length,
      skipped: f.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo').length,
      seconds: Math.round((f.endTime - f.startTime) / 100) / 10,
      failures,
    };
  });
}
