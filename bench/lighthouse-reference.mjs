// Lighthouse of this build beside a reference commit's build, audited in the same run on the same host.
// An absolute score moves with the host (one release scored 97–100 one day and 69–88 another); a ratio to a
// reference audited minutes apart, in the same browser, does not move with it.
//
//   LH_REFERENCE=<commit> node bench/lighthouse.mjs      (or: node bench/lighthouse.mjs --reference [commit])
//
// The reference is checked out into a temporary git worktree, installed (npm ci) and built there, and started
// on its own data directory and port; this tree's build (npm run build first) is started beside it. Both are
// seeded the same way, then each page is audited on both, interleaved (ref, ours, ours, ref, …) LH_RUNS times.
// The worktree is removed at the end, also on failure or Ctrl-C (LH_REFERENCE_KEEP=1 keeps it and reuses it
// next time, for working on the bench itself).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, root, startService, waitFor } from './lib.mjs';

/** The release the mobile scores were last measured against. */
export const DEFAULT_REFERENCE = 'f353f78';

/** The budget beside the reference: CLS at most this, TBT at most the reference's median, score at least this. */
export const COMPARE_BUDGET = { cls: 0.01, performance: 95, accessibility: 100 };

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * What has to be undone on any exit: the services started and the worktree, last first. An entry may return
 * a promise (a service's exit): the normal and the failing path wait for it, a signal cannot.
 */
const cleanups = [];
async function cleanUp() {
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch (err) {
      console.error(`cleanup: ${err.message}`);
    }
  }
}
function cleanUpNow() {
  while (cleanups.length) {
    try {
      cleanups.pop()();
    } catch (err) {
      console.error(`cleanup: ${err.message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    cleanUpNow();
    process.exit(130);
  });
}

/** Runs a command to its end, its output in `logFile`; a failure throws with the output's last lines. */
async function run(cmd, args, { cwd, logFile }) {
  const out = fs.openSync(logFile, 'a');
  // npm runs on the node first on PATH: the one this bench runs on.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` };
  const code = await new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', resolve);
  });
  fs.closeSync(out);
  if (code !== 0) {
    const tail = fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} in ${cwd} exited ${code}:\n${tail}`);
  }
}

function removeWorktree(dir) {
  if (fs.existsSync(dir)) {
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  git('worktree', 'prune');
}

/**
 * The reference commit checked out, installed and built in /tmp/lh-ref-<sha> → { dir, sha }. A worktree
 * left by an interrupted run is replaced, unless LH_REFERENCE_KEEP asks to reuse a built one.
 */
export async function prepareReference(commit, { log = console.error } = {}) {
  const sha = git('rev-parse', '--verify', `${commit}^{commit}`);
  const dir = path.join(os.tmpdir(), `lh-ref-${sha.slice(0, 7)}`);
  const keep = Boolean(process.env.LH_REFERENCE_KEEP);
  if (!keep) cleanups.push(() => removeWorktree(dir));
  const built = fs.existsSync(path.join(dir, 'apps/api/dist/main.js')) && fs.existsSync(path.join(dir, 'apps/web/dist/index.html'));
  if (keep && built) {
    log(`reference ${sha.slice(0, 7)}: reusing the built worktree ${dir}`);
    return { dir, sha };
  }
  removeWorktree(dir);
  git('worktree', 'add', '--detach', dir, sha);
  const logFile = path.join(os.tmpdir(), `lh-ref-${sha.slice(0, 7)}.log`);
  fs.writeFileSync(logFile, '');
  log(`reference ${sha.slice(0, 7)}: npm ci in ${dir} (log: ${logFile})`);
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, logFile });
  log(`reference ${sha.slice(0, 7)}: npm run build`);
  await run('npm', ['run', 'build'], { cwd: dir, logFile });
  return { dir, sha };
}

/**
 * A built tree's service as a real process, as bench/lib.mjs starts this one: its own data directory and
 * free port, generous rate limits, no MQTT port. Settings an older build does not know are ignored by it.
 */
export async function startBuild(dir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-lh-ref-'));
  const child = spawn(process.execPath, ['apps/api/dist/main.js'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      MQTT_PORT: '0',
      SHUTDOWN_DRAIN_SECONDS: '0',
      RATE_LIMIT_MAX: '100000000',
      ANONYMOUS_RATE_LIMIT_MAX: '100000000',
      LOGIN_RATE_LIMIT_MAX: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => child.on('exit', r));
  // Its data directory is removed once it has exited: before, its last writes would make it anew.
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited.then(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  };
  cleanups.push(stop);
  // A first start on a busy host (the embedded database made, migrations run) can take minutes.
  await waitFor(`${url}/api/ready`, 300_000);
  return { url, stop };
}

/**
 * This tree's build, its portal files copied first: another build of the tree during the run (the tree is
 * shared) then cannot change what is measured half-way.
 */
export async function startOurs() {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-lh-web-'));
  fs.cpSync(path.join(root, 'apps/web/dist'), web, { recursive: true });
  cleanups.push(() => fs.rmSync(web, { recursive: true, force: true }));
  const svc = await startService({ WEB_DIST_DIR: web });
  cleanups.push(() => svc.stop());
  return svc;
}

/** Where a page ends up (its path after any redirect) and its text, once its code and data are in. */
async function landing(browser, url) {
  const tab = await browser.tab();
  await tab.goto(url);
  // Something drawn (the router draws nothing until the route's code is in), then no request for half a
  // second: the data it reads are in too. A page that keeps polling never goes quiet: its text is taken after 10 s.
  await tab.locator('#root > *').first().waitFor();
  await tab.waitForLoadState('networkidle', { timeout: 10_000 }).catch(() => {});
  return { path: new URL(tab.url()).pathname, text: (await tab.locator('body').innerText()).trim() };
}

/**
 * What the reference draws where it has no page: its not-found page for a path no route matches, and,
 * signed in, what it draws for a first segment its router reads as an application's id (an older router
 * reads /account so). Signed out, such a segment sends to the login page, which the redirect check covers.
 */
async function referenceNotFoundTexts(browser, base, signedIn) {
  const probes = [`/lh/no/such/page/${Date.now()}`, ...(signedIn ? [`/lh-no-such-page-${Date.now()}`] : [])];
  const texts = [];
  for (const p of probes) texts.push((await landing(browser, `${base}${p}`)).text);
  return texts;
}

/**
 * Whether the reference lacks the page: it draws what it draws for a made-up path, or sends the browser
 * elsewhere where ours stays (e.g. to the login page, for a path an older router reads as an application).
 */
async function referenceLacks(browser, targets, route, notFoundTexts) {
  const ref = await landing(browser, `${targets.ref.base}${route.ref}`);
  if (notFoundTexts.includes(ref.text)) return 'the reference has no such page';
  const ours = await landing(browser, `${targets.ours.base}${route.ours}`);
  const asked = (r) => new URL(r, 'http://x').pathname;
  if (ref.path !== asked(route.ref) && ours.path === asked(route.ours)) return `the reference has no such page (sent to ${ref.path})`;
  return null;
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const med = (xs) => {
  const s = sorted(xs);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Each metric's median over the runs and its range (min, max); a run Lighthouse could not finish is left out. */
export function summarize(all) {
  const ok = all.filter((r) => typeof r.performance === 'number');
  const stat = (key) => {
    const xs = ok.map((r) => r[key]).filter((x) => Number.isFinite(x));
    return xs.length ? { median: med(xs), min: Math.min(...xs), max: Math.max(...xs) } : null;
  };
  return {
    runs: all.length,
    errors: all.length - ok.length,
    performance: stat('performance'),
    tbt: stat('tbt'),
    cls: stat('cls'),
    lcp: stat('lcp'),
    // Accessibility does not depend on the host: the worst run counts.
    accessibility: Math.min(...all.map((r) => (typeof r.accessibility === 'number' ? r.accessibility : 0))),
    a11yFailures: [...new Set(all.flatMap((r) => (r.a11yFailures ? r.a11yFailures.split(' ') : [])))].join(' '),
    layoutShifts: all.flatMap((r) => r.layoutShifts ?? []),
    longTasks: all.flatMap((r) => r.longTasks ?? []),
    bootup: all.flatMap((r) => r.bootup ?? []),
  };
}

/**
 * Over the budget beside the reference: CLS above 0.01, TBT above the reference's median, score under 95,
 * accessibility under 100. `worse`: ours is worse than the reference beyond the runs' spread (its best run
 * worse than the reference's worst) on CLS or TBT.
 */
export function verdict(ours, ref) {
  const over = [];
  if (!ours.performance) return { over: ['no finished run'], worse: [] };
  if (ours.cls.median > COMPARE_BUDGET.cls) over.push(`CLS > ${COMPARE_BUDGET.cls}`);
  if (ref?.tbt && ours.tbt.median > ref.tbt.median) over.push('TBT > ref');
  if (ours.performance.median < COMPARE_BUDGET.performance) over.push(`score < ${COMPARE_BUDGET.performance}`);
  if (ours.accessibility < COMPARE_BUDGET.accessibility) over.push(`a11y ${ours.accessibility}${ours.a11yFailures ? ` (${ours.a11yFailures})` : ''}`);
  const worse = [];
  // One run a side has no spread to be beyond.
  if (ref && ours.runs > 1 && ref.runs > 1) {
    if (ours.cls.min > ref.cls.max) worse.push('CLS');
    if (ours.tbt.min > ref.tbt.max) worse.push('TBT');
  }
  return { over, worse };
}

/**
 * Every page audited on both services, interleaved: run i audits the reference then ours, run i+1 ours then
 * the reference, so the host's drift and any advantage of going second fall on both alike. The signed-out
 * pages come first; then the browser signs in on both (each origin keeps its own session) for the rest.
 * A page whose route the reference could not be seeded for, or which the reference does not have, is not
 * audited here (nothing to compare with) and its row says why.
 * `targets`: { ours, ref }, each { base, email, password, appId, lockId, tileId }; `openBrowser` and
 * `auditOnce`: bench/lighthouse.mjs's, passed in (that file runs this one, so it cannot be imported back).
 */
export async function compareWithReference({ targets, pages, runs, formFactor = 'mobile', openBrowser, auditOnce, log = console.error }) {
  const browser = await openBrowser();
  const rows = [];
  try {
    for (const t of Object.values(targets)) await browser.warm(t.base);
    for (const signedIn of [false, true]) {
      if (signedIn) for (const t of Object.values(targets)) await browser.signIn(t.base, t.email, t.password);
      const notFound = await referenceNotFoundTexts(browser, targets.ref.base, signedIn);
      for (const page of pages.filter((p) => (p.signedIn !== false) === signedIn)) {
        const route = { ours: page.path(targets.ours), ref: (page.refPath ?? page.path)(targets.ref) };
        if (route.ours.includes('undefined')) {
          rows.push({ page: page.name, route: route.ours, skipped: 'ours could not be seeded for it' });
          continue;
        }
        let refMissing = null;
        if (route.ref.includes('undefined')) refMissing = 'the reference could not be seeded for it';
        else refMissing = await referenceLacks(browser, targets, route, notFound);
        if (refMissing) {
          // Nothing to compare with: the run without a reference audits it against the absolute budget.
          rows.push({ page: page.name, route: route.ours, skipped: refMissing });
          log(`${page.name}: not audited, ${refMissing}`);
          continue;
        }
        const all = { ours: [], ref: [] };
        for (let i = 0; i < runs; i++) {
          const order = i % 2 === 0 ? ['ref', 'ours'] : ['ours', 'ref'];
          for (const which of order) all[which].push(await auditOnce(browser.port, `${targets[which].base}${route[which]}`, formFactor, { label: which }));
        }
        const ours = summarize(all.ours);
        const ref = summarize(all.ref);
        rows.push({ page: page.name, route: route.ours, ours, ref, ...verdict(ours, ref) });
        log(`${page.name}: ours ${ours.performance?.median} (TBT ${ours.tbt?.median}, CLS ${ours.cls?.median}), ref ${ref.performance?.median} (TBT ${ref.tbt?.median}, CLS ${ref.cls?.median})`);
      }
    }
  } finally {
    await browser.close();
  }
  return rows;
}

const range = (s, digits = 0) => (s ? `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})` : '—');
const ratio = (a, b) => (a && b ? (b.median === 0 ? (a.median === 0 ? '1.00' : '∞') : (a.median / b.median).toFixed(2)) : '—');
const shortRoute = (r) => r.replace(/^\/t\/[0-9a-f-]{36}/, '/t/:tileId').replace(/[0-9a-f-]{36}/, ':appId').replace(/[0-9a-f-]{36}/, ':lockId').replace(/#.*/, '#…');

/** The table (markdown), then for every page worse than the reference beyond the spread, where it comes from. */
export function formatComparison(rows, { refLabel, runs }) {
  const lines = [
    `Median of ${runs} runs a page (range in brackets); ratios are ours/ref of the medians. Budget: score ≥ ${COMPARE_BUDGET.performance}, ` +
      `a11y ${COMPARE_BUDGET.accessibility}, CLS ≤ ${COMPARE_BUDGET.cls}, TBT ≤ the reference's median.`,
    '',
    `| page | route | score ref ${refLabel} | score ours | score ours/ref | TBT ms ref | TBT ms ours | TBT ours/ref | CLS ref | CLS ours | a11y ours | over budget |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    if (r.skipped) {
      lines.push(`| ${r.page} | ${shortRoute(r.route)} | — | — | — | — | — | — | — | — | — | not audited: ${r.skipped} |`);
      continue;
    }
    const { ours, ref } = r;
    const flags = [...r.over, ...r.worse.map((w) => `${w} worse than ref beyond spread`)];
    lines.push(
      `| ${r.page} | ${shortRoute(r.route)} | ${range(ref.performance)} | ${range(ours.performance)} | ${ratio(ours.performance, ref.performance)} | ` +
        `${range(ref.tbt)} | ${range(ours.tbt)} | ${ratio(ours.tbt, ref.tbt)} | ${range(ref.cls, 3)} | ${range(ours.cls, 3)} | ` +
        `${ours.accessibility} | ${flags.length ? `**${flags.join('; ')}**` : 'met'} |`,
    );
  }
  const audited = rows.filter((r) => !r.skipped);
  const met = audited.filter((r) => r.over.length === 0);
  lines.push('', `${met.length}/${audited.length} audited pages within the budget; ${rows.length - audited.length} not audited.`);
  // Where it comes from, for every page over the budget on CLS or TBT or worse than the reference beyond the spread.
  const shiftedOrBlocked = (x) => x.worse.length || x.over.some((o) => o.startsWith('CLS') || o.startsWith('TBT'));
  for (const r of audited.filter(shiftedOrBlocked)) {
    const why = [...r.over.filter((o) => o.startsWith('CLS') || o.startsWith('TBT')), ...r.worse.map((w) => `${w} worse than ref beyond spread`)];
    lines.push('', `${r.page} (${shortRoute(r.route)}): ${why.join('; ')}`);
    for (const [label, s] of [['ours', r.ours], ['ref', r.ref]]) {
      const shifts = s.layoutShifts.map((x) => `${x.node} ${x.score.toFixed(3)}`);
      const long = s.longTasks.filter((t) => t.duration >= 50);
      const total = long.reduce((sum, t) => sum + t.duration, 0);
      const tasks = long
        .sort((a, b) => b.duration - a.duration)
        .slice(0, 8)
        .map((t) => `${t.duration} ms at ${t.start} ms ${t.url.replace(/^https?:\/\/[^/]+/, '').replace(/\/[0-9a-f-]{36}/g, '/:id')}`);
      lines.push(`- ${label}: layout shifts (all runs): ${shifts.join(', ') || 'none'}`);
      lines.push(`- ${label}: ${long.length} long tasks ≥ 50 ms in ${s.runs} runs, ${total} ms in all; the longest: ${tasks.join(', ') || 'none'}`);
      // Each script's main-thread time, its mean over the runs: evaluation + parse and compile, in ms.
      const byScript = new Map();
      for (const b of s.bootup) {
        const name = b.url.replace(/^https?:\/\/[^/]+/, '').replace(/\/[0-9a-f-]{36}/g, '/:id');
        const sum = byScript.get(name) ?? { scripting: 0, parse: 0 };
        byScript.set(name, { scripting: sum.scripting + b.scripting, parse: sum.parse + b.parse });
      }
      const scripts = [...byScript]
        .sort((a, b) => b[1].scripting + b[1].parse - (a[1].scripting + a[1].parse))
        .slice(0, 8)
        .map(([name, t]) => `${name} ${Math.round(t.scripting / s.runs)} + ${Math.round(t.parse / s.runs)}`);
      lines.push(`- ${label}: script time a run (evaluation + parse/compile, ms): ${scripts.join(', ') || 'none'}`);
    }
  }
  return lines.join('\n');
}

/**
 * The whole reference mode: the reference prepared, both services started and seeded, every page compared,
 * the table printed; everything started is stopped and the worktree removed, also when a step fails.
 */
export async function runReferenceMode({ commit = DEFAULT_REFERENCE, pages, runs = Number(process.env.LH_RUNS ?? 3), seed, openBrowser, auditOnce }) {
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const loadBefore = load();
  const started = new Date().toISOString();
  try {
    const { dir, sha } = await prepareReference(commit);
    const refSvc = await startBuild(dir);
    const oursSvc = await startOurs();
    const missing = [];
    // "tile: POST /platform/application/:id/lock/:id/tile → 404", without the answer's body.
    const brief = (err) => err.message.split('\n')[0].replace(/[0-9a-f-]{36}/g, ':id').replace(/ \{.*$/, '');
    const refOwner = await seed(refSvc.url, { onMissing: (step, err) => missing.push(`${step} (${brief(err)})`) });
    const oursOwner = await seed(oursSvc.url);
    for (const m of missing) console.error(`reference could not seed ${m}`);
    const rows = await compareWithReference({
      targets: { ours: { base: oursSvc.url, ...oursOwner }, ref: { base: refSvc.url, ...refOwner } },
      pages,
      runs,
      openBrowser,
      auditOnce,
    });
    await refSvc.stop();
    await oursSvc.stop();
    const head = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'apps', 'packages') ? ' + uncommitted changes' : '';
    console.log(`Lighthouse mobile, ours (${head}${dirty}, this tree's build) beside the reference ${sha.slice(0, 7)}, ${started} – ${new Date().toISOString()}`);
    console.log(`Load average (1, 5, 15 min) before: ${loadBefore}; after: ${load()}; ${os.cpus().length} cores.`);
    if (missing.length) console.log(`The reference could not be seeded with: ${missing.join('; ')}.`);
    console.log('');
    console.log(formatComparison(rows, { refLabel: sha.slice(0, 7), runs }));
    if (process.env.LH_JSON) fs.writeFileSync(process.env.LH_JSON, JSON.stringify({ reference: sha, head, rows }, null, 2));
    return rows;
  } finally {
    await cleanUp();
  }
}
