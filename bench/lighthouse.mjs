// Lighthouse (performance + accessibility) on every page of the portal, in Debian's Chromium, in one run.
// Signs in through the real login screen so the app pages are measured as a user sees them.
//
//   node bench/lighthouse.mjs                      starts the built service (npm run build first), seeds an
//                                                  owner with a set-up application, measures every page on
//                                                  mobile and prints the table against the budget
//   node bench/lighthouse.mjs <base> <email> <password> <appId> [lockId] [tileId]   the same against a running service
//   LH_REFERENCE=<commit> node bench/lighthouse.mjs  (or --reference [commit], default f353f78) every page on
//                                                  this build and on the commit's, interleaved, with the
//                                                  ratios ours/ref: see bench/lighthouse-reference.mjs
//
// LH_RUNS (default 3) audits per page; the table shows the median run and the range of scores. LH_TRACE_DIR keeps
// each audit's trace in that directory.
// bench/run.mjs calls runLighthouse() for desktop and mobile. The budget: mobile, Lighthouse's
// default throttling, performance ≥ 95 and accessibility 100 on every page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { chromium } from '@playwright/test';
import { api, freePort, seedOwner, startService } from './lib.mjs';

/**
 * Every page a user sees. A new screen (locks, history, …) is one more line here and both benches measure
 * it. `signedIn: false` pages are measured before the login; `path` gets the seeded owner ({ appId, lockId,
 * tileId }); `refPath`, where given, is the same page's address on the reference release
 * (bench/lighthouse-reference.mjs). The pages an emailed link opens get made-up link values: they draw what
 * such a link draws (the form, or the link's refusal) without spending a real one.
 */
export const PAGES = [
  { name: 'splash / login', path: () => '/login', signedIn: false },
  { name: 'register', path: () => '/register', signedIn: false },
  { name: 'reset password (from the email)', path: () => '/reset-password#userId=00000000-0000-4000-8000-000000000000&token=bench-link', signedIn: false },
  { name: 'verify email (from the email)', path: () => '/verify-email#code=bench-link', signedIn: false },
  // The reference's invitation email put the link's values in the query, which it reads: given the fragment it
  // draws the "incomplete link" notice, not the form (refPath: the reference's own link to the same page).
  {
    name: 'accept invite (from the email)',
    path: () => '/accept-invite#email=invitee%40bench.example.com&code=bench-link',
    refPath: () => '/accept-invite?email=invitee%40bench.example.com&code=bench-link',
    signedIn: false,
  },
  { name: 'tile, signed out (a phone at the door)', path: (s) => `/t/${s.tileId}`, signedIn: false },
  { name: 'start', path: () => '/start' },
  { name: 'wizard', path: () => '/start/new' },
  { name: 'overview', path: (s) => `/${s.appId}/overview` },
  { name: 'getting started', path: (s) => `/${s.appId}/getting-started/ios` },
  { name: 'settings (partner users)', path: (s) => `/${s.appId}/settings` },
  { name: 'locks', path: (s) => `/${s.appId}/locks` },
  { name: 'lock (shares, activity)', path: (s) => `/${s.appId}/locks/${s.lockId}` },
  { name: 'outbox', path: (s) => `/${s.appId}/outbox` },
  { name: 'webhooks', path: (s) => `/${s.appId}/webhooks` },
  { name: 'history', path: (s) => `/${s.appId}/history` },
  { name: 'account', path: () => '/account' },
  { name: 'tile, signed in', path: (s) => `/t/${s.tileId}` },
];

export const BUDGET = { performance: 95, accessibility: 100 };
export const meetsBudget = (r) => r.performance >= BUDGET.performance && r.accessibility >= BUDGET.accessibility;

/**
 * A headless Chromium that Lighthouse drives over its debugging port. A persistent context is the browser's
 * default context, so Lighthouse's tabs share its storage: a sign-in done in a tab holds for the audits of
 * that origin (each origin, i.e. each service's port, keeps its own).
 */
export async function openBrowser() {
  const port = await freePort();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-lh-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', `--remote-debugging-port=${port}`],
  });
  const tab = async () => context.pages()[0] ?? (await context.newPage());
  return {
    port,
    tab,
    /**
     * One load of the sign-in page, unmeasured: the first audit of a fresh browser (or of an origin it has
     * not loaded yet) otherwise also measures the browser starting up.
     */
    warm: async (base) => {
      const t = await tab();
      await t.goto(`${base}/login`);
      await t.getByRole('button', { name: /login/i }).waitFor();
    },
    /** Signs in through the real login screen. */
    signIn: async (base, email, password) => {
      const t = await tab();
      await t.goto(`${base}/login`);
      await t.getByLabel(/email/i).fill(email);
      await t.getByLabel(/password/i).fill(password);
      await t.getByRole('button', { name: /login/i }).click();
      await t.waitForURL(/\/start$/);
    },
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** One Lighthouse audit of `url` in the browser on `port` → the scores and the metrics that move them. */
export async function auditOnce(port, url, formFactor = 'mobile', { label = '' } = {}) {
  const flags = { port, output: 'json', logLevel: 'error', onlyCategories: ['performance', 'accessibility'], disableStorageReset: true };
  // LH_CPU_PROFILE=1: the trace also samples the JavaScript (which function the time is spent in), for reading
  // a kept trace; it adds its own overhead, so the figures of such a run are not for comparing with others.
  if (process.env.LH_CPU_PROFILE) flags.additionalTraceCategories = 'disabled-by-default-v8.cpu_profiler';
  // A run Lighthouse could not finish has a null score (e.g. NO_FCP on a cold browser): that is no
  // measurement, not a 0. Try once more, then report the error instead of a number.
  let lhr;
  let trace;
  let result;
  for (let attempt = 0; attempt < 2; attempt++) {
    result = await lighthouse(url, flags, formFactor === 'desktop' ? desktopConfig : undefined);
    lhr = result.lhr;
    trace = result.artifacts.Trace;
    if (lhr.categories.performance.score !== null) break;
  }
  // LH_TRACE_DIR: each audit's trace kept there (open it in Chrome's Performance panel), named by side (ours,
  // ref: `label`), port and path; bench/lighthouse-trace.mjs breaks them down.
  if (process.env.LH_TRACE_DIR && trace) {
    fs.mkdirSync(process.env.LH_TRACE_DIR, { recursive: true });
    const { port: site, pathname } = new URL(url);
    const name = `${label ? `${label}-` : ''}${site}${pathname.replace(/[^a-z0-9]+/gi, '-')}-${Date.now()}.json`;
    fs.writeFileSync(path.join(process.env.LH_TRACE_DIR, name), JSON.stringify(trace));
    // Beside it what Lighthouse simulates the throttled load from (the network log, the settings): with it,
    // bench/lighthouse-trace.mjs tells each task's share of the simulated TBT, as Lighthouse reckons it.
    const { DevtoolsLog, URL: urls, GatherContext } = result.artifacts;
    const lantern = { devtoolsLog: DevtoolsLog, URL: urls, gatherContext: GatherContext, settings: lhr.configSettings, tbt: lhr.audits['total-blocking-time']?.numericValue };
    fs.writeFileSync(path.join(process.env.LH_TRACE_DIR, name.replace(/\.json$/, '.lantern.json')), JSON.stringify(lantern));
  }
  const c = lhr.categories;
  const score = (v) => (v === null ? `error ${lhr.runtimeError?.code ?? 'unknown'}` : Math.round(v * 100));
  // The metrics that move the score, so a page under budget says where to look.
  const ms = (id) => Math.round(lhr.audits[id]?.numericValue ?? NaN);
  const failing = Object.values(c.accessibility.auditRefs ?? [])
    .map((ref) => lhr.audits[ref.id])
    .filter((a) => a && a.score !== null && a.score < 1)
    .map((a) => a.id);
  const items = (id) => lhr.audits[id]?.details?.items ?? [];
  return {
    performance: score(c.performance.score),
    accessibility: score(c.accessibility.score),
    fcp: ms('first-contentful-paint'),
    lcp: ms('largest-contentful-paint'),
    tbt: ms('total-blocking-time'),
    cls: Math.round((lhr.audits['cumulative-layout-shift']?.numericValue ?? 0) * 1000) / 1000,
    a11yFailures: failing.join(' '),
    // Where a shift or a blocking stretch comes from: the elements that moved (with their share of the
    // CLS) and the main thread's long tasks (the script they ran, their length in ms).
    layoutShifts: items('layout-shifts').map((i) => ({ score: i.score, node: i.node?.selector ?? i.node?.snippet ?? '' })),
    longTasks: items('long-tasks').map((i) => ({ url: typeof i.url === 'string' ? i.url : String(i.url?.value ?? i.url ?? ''), start: Math.round(i.startTime ?? 0), duration: Math.round(i.duration) })),
    // Each script's main-thread time (its evaluation, and its parse and compile), as the bootup-time audit
    // reports it: which chunk the blocking time is spent in.
    bootup: items('bootup-time').map((i) => ({ url: String(i.url ?? ''), scripting: Math.round(i.scripting ?? 0), parse: Math.round(i.scriptParseCompile ?? 0) })),
  };
}

export async function runLighthouse({ base, email, password, appId, lockId, tileId, formFactors = ['mobile'], pages = PAGES, runs = Number(process.env.LH_RUNS ?? 3) }) {
  const browser = await openBrowser();
  const results = [];
  /**
   * `runs` audits of the page, the one with the median performance score reported (its metrics with it)
   * and the range beside it: on a shared host one audit moves by 10+ points from one minute to the next.
   */
  const audit = async (page, formFactor) => {
    const route = page.path({ appId, lockId, tileId });
    const all = [];
    for (let i = 0; i < runs; i++) all.push(await auditOnce(browser.port, `${base}${route}`, formFactor));
    const numeric = all.filter((r) => typeof r.performance === 'number').sort((a, b) => a.performance - b.performance);
    const median = numeric[Math.floor((numeric.length - 1) / 2)] ?? all[0];
    const scores = numeric.map((r) => r.performance);
    results.push({
      page: page.name,
      route,
      formFactor,
      ...median,
      // Accessibility does not depend on the host: the worst run is reported.
      accessibility: Math.min(...all.map((r) => (typeof r.accessibility === 'number' ? r.accessibility : 0))),
      range: scores.length > 1 ? `${scores[0]}–${scores.at(-1)}` : '',
    });
  };
  try {
    await browser.warm(base);
    for (const page of pages.filter((p) => p.signedIn === false)) for (const ff of formFactors) await audit(page, ff);
    await browser.signIn(base, email, password);
    for (const page of pages.filter((p) => p.signedIn !== false)) for (const ff of formFactors) await audit(page, ff);
  } finally {
    await browser.close();
  }
  return results;
}

/**
 * The owner's application with every wizard step done, a test email in its Outbox, a lock and a tile of it, so
 * its pages show what a real one shows. `onMissing(step, error)`: for a build that may lack a route (an older
 * release), a step after the owner's application that fails is reported to it and left out (its ids stay
 * undefined) instead of throwing.
 */
export async function seedFinishedOwner(base, { onMissing } = {}) {
  const owner = await seedOwner(base, 'lighthouse');
  const step = async (name, fn) => {
    try {
      return await fn();
    } catch (err) {
      if (!onMissing) throw err;
      onMissing(name, err);
      return undefined;
    }
  };
  await step('application details', () =>
    api(base, 'POST', `/platform/application/${owner.appId}`, {
      token: owner.token,
      body: {
        privacyPolicy: 'https://bench.example.com/privacy',
        supportContact: 'mailto:help@bench.example.com',
        emailPreferences: { senderEmail: 'keys@bench.example.com', senderName: 'Bench Team', onlySendEssentialEmails: true, callToAction: null },
      },
    }),
  );
  // One email in the Outbox on every release: a release that sends a verification email on sign-up has it
  // there besides, one that does not would otherwise be measured with an empty Outbox.
  await step('test email', () =>
    api(base, 'POST', `/platform/application/${owner.appId}/email/test`, {
      token: owner.token,
      body: { emailPreferences: { senderEmail: 'keys@bench.example.com', senderName: 'Bench Team' } },
    }),
  );
  const lock = await step('lock', async () => (await api(base, 'POST', `/platform/application/${owner.appId}/lock`, { token: owner.token, body: { name: 'Front door' } })).body);
  const tile = lock && (await step('tile', async () => (await api(base, 'POST', `/platform/application/${owner.appId}/lock/${lock.id}/tile`, { token: owner.token })).body));
  return { ...owner, lockId: lock?.id, tileId: tile?.tileId };
}

function printTable(results) {
  const header = '| page | route | performance (median; range) | accessibility | FCP ms | LCP ms | TBT ms | CLS | verdict |';
  console.log([header, '|---|---|---|---|---|---|---|---|---|'].join('\n'));
  for (const r of results) {
    const verdict = meetsBudget(r) ? 'met' : `**NOT met**${r.a11yFailures ? ` (a11y: ${r.a11yFailures})` : ''}`;
    console.log(`| ${r.page} | ${r.route.replace(/^\/t\/[0-9a-f-]{36}/, '/t/:tileId').replace(/[0-9a-f-]{36}/, ':appId').replace(/[0-9a-f-]{36}/, ':lockId')} | ${r.performance}${r.range ? ` (${r.range})` : ''} | ${r.accessibility} | ${r.fcp} | ${r.lcp} | ${r.tbt} | ${r.cls} | ${verdict} |`);
  }
  const under = results.filter((r) => !meetsBudget(r));
  console.log(`\n${results.length - under.length}/${results.length} pages meet performance ≥ ${BUDGET.performance} and accessibility ${BUDGET.accessibility} (mobile).`);
  return under.length === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = args.indexOf('--reference');
  const reference = flag >= 0 ? (args[flag + 1] ?? 'default') : process.env.LH_REFERENCE;
  if (reference) {
    const { DEFAULT_REFERENCE, runReferenceMode } = await import('./lighthouse-reference.mjs');
    // LH_PAGES: a regular expression on the pages' names, to audit some of them.
    const pages = process.env.LH_PAGES ? PAGES.filter((p) => new RegExp(process.env.LH_PAGES).test(p.name)) : PAGES;
    await runReferenceMode({ commit: reference === 'default' ? DEFAULT_REFERENCE : reference, pages, seed: seedFinishedOwner, openBrowser, auditOnce });
  } else if (args[0]) {
    const [base, email, password, appId, lockId, tileId] = args;
    printTable(await runLighthouse({ base, email, password, appId, lockId, tileId, pages: PAGES.filter((p) => !p.path({ appId, lockId, tileId }).includes('undefined')) }));
  } else {
    const svc = await startService();
    try {
      const owner = await seedFinishedOwner(svc.url);
      printTable(await runLighthouse({ base: svc.url, ...owner }));
    } finally {
      await svc.stop();
    }
  }
}
