#!/usr/bin/env node
// Where a page's main-thread time goes, from the traces bench/lighthouse.mjs keeps (LH_TRACE_DIR), read with
// Lighthouse's own trace model.
//
//   node bench/lighthouse-trace.mjs <dir or trace.json …>      [LH_TRACE_TOP=12]
//
// Traces are grouped by side (ours / ref: the file name's prefix) and path; a group's figures are medians over
// its traces. For each: the main thread's time by kind; with the network log kept beside a trace, Lighthouse's
// simulated TBT and each kind of task's share of it (what a task ran: a script's evaluation, a call, a layout),
// ours beside the reference's; the longest tasks of the median trace with what ran in them ("blocks": 4× the
// observed length less 50 ms, the simulated mobile throttling's reckoning). A trace taken with LH_CPU_PROFILE=1
// also gives each long task's time by script, and the functions the long tasks spent it in (sampled; with the
// script's line and column, the build being minified).
import fs from 'node:fs';
import path from 'node:path';
import { TraceProcessor } from 'lighthouse/core/lib/tracehouse/trace-processor.js';
import { MainThreadTasks } from 'lighthouse/core/lib/tracehouse/main-thread-tasks.js';
import { CpuProfileModel } from 'lighthouse/core/lib/tracehouse/cpu-profile-model.js';
import { TBTImpactTasks } from 'lighthouse/core/computed/tbt-impact-tasks.js';
import { TotalBlockingTime } from 'lighthouse/core/computed/metrics/total-blocking-time.js';

const CPU_SLOWDOWN = 4;
const TOP = Number(process.env.LH_TRACE_TOP ?? 12);

const files = process.argv.slice(2).flatMap((arg) =>
  fs.statSync(arg).isDirectory()
    ? fs.readdirSync(arg).filter((f) => f.endsWith('.json') && !f.endsWith('.lantern.json')).map((f) => path.join(arg, f))
    : [arg],
);
if (!files.length) {
  console.error('usage: node bench/lighthouse-trace.mjs <dir or trace.json …>');
  process.exit(1);
}

/** A script's URL without origin, query or content hash: the same module on both sides gets one name. */
const shortUrl = (url) => {
  if (!url) return '(no script)';
  try {
    const u = new URL(url);
    return u.pathname.replace(/-[A-Za-z0-9_-]{8}(\.js)$/, '$1').replace(/[0-9a-f-]{36}/g, ':id');
  } catch {
    return url;
  }
};

/** What ran in a task: its scripts' evaluations and calls, their longest first, with the time each took. */
function describe(task) {
  const parts = new Map();
  const visit = (node) => {
    const e = node.event;
    const d = e.args?.data ?? {};
    let key = null;
    if (e.name === 'EvaluateScript' || e.name === 'v8.evaluateModule') key = `eval ${shortUrl(d.url ?? node.attributableURLs.at(-1))}`;
    else if (e.name === 'FunctionCall') key = `call ${d.functionName || '(anonymous)'} ${shortUrl(d.url)}:${d.lineNumber ?? ''}`;
    if (key) {
      parts.set(key, (parts.get(key) ?? 0) + node.duration);
      return; // its children are inside its time
    }
    for (const child of node.children) visit(child);
  };
  visit(task);
  const other = task.duration - [...parts.values()].reduce((a, b) => a + b, 0);
  const list = [...parts].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `${k} ${v.toFixed(0)}`);
  if (other >= 3) list.push(`${task.group.id} etc. ${other.toFixed(0)}`);
  return list.join('; ');
}

/**
 * Lighthouse's own share of the simulated TBT for every task (its Lantern simulation, from the network log kept
 * beside the trace): the TBT it reports, and by what each task ran, the self share of the blocking time.
 */
async function lanternImpact(trace, sidecar) {
  if (!fs.existsSync(sidecar)) return null;
  const { devtoolsLog, URL, gatherContext, settings, tbt: reported } = JSON.parse(fs.readFileSync(sidecar, 'utf8'));
  const data = { trace, devtoolsLog, URL, gatherContext, settings, SourceMaps: [], simulator: null };
  const context = { computedCache: new Map(), settings };
  const tbt = await TotalBlockingTime.request(data, context);
  const tasks = await TBTImpactTasks.request(data, context);
  const byWhat = {};
  for (const t of tasks) {
    if (t.selfTbtImpact <= 0) continue;
    const what = taskLabel(t);
    byWhat[what] = (byWhat[what] ?? 0) + t.selfTbtImpact;
  }
  return { tbt: tbt.timing, reported, byWhat };
}

/** One task's own kind: a script's evaluation, a call into a function (with its script), or an event's name. */
function taskLabel(t) {
  const e = t.event;
  const d = e.args?.data ?? {};
  if (e.name === 'FunctionCall') return `call ${d.functionName || '(anonymous)'} ${shortUrl(d.url)}:${d.lineNumber ?? ''}`;
  if (e.name === 'EvaluateScript' || e.name === 'v8.evaluateModule') return `eval ${shortUrl(d.url ?? t.attributableURLs.at(-1))}`;
  const url = t.attributableURLs.at(-1);
  return `${e.name}${url ? ` in ${shortUrl(url)}` : ''}`;
}

async function analyse(file) {
  const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
  const lantern = await lanternImpact(trace, file.replace(/\.json$/, '.lantern.json')).catch((err) => {
    console.error(`${path.basename(file)}: no Lantern figures (${err.message})`);
    return null;
  });
  const processed = TraceProcessor.processTrace(trace);
  const nav = TraceProcessor.processNavigation(processed);
  const fcp = nav.timings.firstContentfulPaint;
  const tasks = MainThreadTasks.getMainThreadTasks(processed.mainThreadEvents, processed.frames, processed.timestamps.traceEnd, processed.timestamps.timeOrigin);
  // The tasks' times are in ms from the time origin (the navigation's start); the trace's events' in µs.
  const origin = processed.timestamps.timeOrigin;
  const top = tasks.filter((t) => !t.parent);
  const byGroup = {};
  for (const t of tasks) byGroup[t.group.id] = (byGroup[t.group.id] ?? 0) + t.selfTime;
  const long = top
    .map((t) => ({ start: t.startTime, duration: t.duration, task: t }))
    .filter((t) => t.duration * CPU_SLOWDOWN > 50)
    .map((t) => ({ ...t, blocking: t.duration * CPU_SLOWDOWN - 50, afterFcp: t.start >= fcp }));
  // The sampled profile of the page's main thread, if the trace has one: each function's time inside the long
  // tasks (before FCP too: the simulation moves FCP), counted once per sample whatever its depth (inclusive),
  // where the sample was (self), and each script's self time.
  const functions = { self: {}, inclusive: {}, byScript: {} };
  const main = processed.mainThreadEvents[0];
  const profile = CpuProfileModel.collectProfileEvents(trace.traceEvents).find((p) => p.pid === main?.pid && p.tid === main?.tid);
  let windows = [];
  if (profile) {
    windows = top.filter((t) => t.duration * CPU_SLOWDOWN > 50).map((t) => [origin + t.startTime * 1000, origin + t.endTime * 1000, undefined, t]);
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const name = (n) => {
      const f = n.callFrame;
      return `${f.functionName || '(anonymous)'} ${f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}:${f.columnNumber + 1}` : ''}`.trim();
    };
    let ts = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      ts += profile.timeDeltas[i] ?? 0;
      const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
      const w = dt > 0 ? windows.find(([a, b]) => ts >= a && ts < b) : undefined;
      if (!w) continue;
      let node = byId.get(profile.samples[i]);
      if (!node) continue;
      // Each long task's own split by script (self time), to tell what its evaluation or render spent.
      const inTask = (w[2] ??= {});
      const taskScript = shortUrl(node.callFrame.url || '') || '(native)';
      inTask[taskScript] = (inTask[taskScript] ?? 0) + dt;
      functions.self[name(node)] = (functions.self[name(node)] ?? 0) + dt;
      const script = `script ${shortUrl(node.callFrame.url || '')}`;
      functions.byScript[script] = (functions.byScript[script] ?? 0) + dt;
      const seen = new Set();
      while (node) {
        const n = name(node);
        if (!seen.has(n)) {
          seen.add(n);
          functions.inclusive[n] = (functions.inclusive[n] ?? 0) + dt;
        }
        node = node.parent === undefined ? undefined : byId.get(node.parent);
      }
    }
  }
  const splitOf = new Map();
  if (profile) for (const w of windows) if (w[2]) splitOf.set(w[3], w[2]);
  return {
    lantern,
    functions,
    fcp,
    total: top.reduce((a, t) => a + t.duration, 0),
    blocking: long.reduce((a, t) => a + t.blocking, 0),
    blockingAfterFcp: long.filter((t) => t.afterFcp).reduce((a, t) => a + t.blocking, 0),
    byGroup,
    long: long.sort((a, b) => b.blocking - a.blocking).map((t) => ({ start: t.start, duration: t.duration, blocking: t.blocking, afterFcp: t.afterFcp, what: describe(t.task), split: splitOf.get(t.task) })),
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};

/** "ours-12345-start-…json" → side "ours", page "start"; an unlabelled trace's side is its port. */
function key(file) {
  const base = path.basename(file, '.json').replace(/-\d{13}$/, '');
  const m = base.match(/^(ours|ref)-\d+-?(.*)$/) ?? base.match(/^(\d+)-?(.*)$/);
  return m ? { side: m[1], page: (m[2] || '/').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id') } : { side: '?', page: base };
}

const groups = new Map();
for (const file of files) {
  const k = key(file);
  const id = `${k.page}\u0000${k.side}`;
  if (!groups.has(id)) groups.set(id, { ...k, runs: [] });
  try {
    groups.get(id).runs.push(await analyse(file));
  } catch (err) {
    console.error(`${file}: ${err.message}`);
  }
}

const pages = [...new Set([...groups.values()].map((g) => g.page))].sort();
for (const page of pages) {
  const sides = [...groups.values()].filter((g) => g.page === page).sort((a, b) => a.side.localeCompare(b.side));
  console.log(`\n## ${page}`);
  const scriptsBySide = {};
  const lanternBySide = {};
  for (const g of sides) {
    const runs = g.runs;
    const groupIds = [...new Set(runs.flatMap((r) => Object.keys(r.byGroup)))];
    const kinds = groupIds
      .map((id) => [id, median(runs.map((r) => r.byGroup[id] ?? 0))])
      .sort((a, b) => b[1] - a[1])
      .map(([id, v]) => `${id} ${v.toFixed(0)}`)
      .join(', ');
    console.log(`\n${g.side} (${runs.length} traces): main thread ${median(runs.map((r) => r.total)).toFixed(0)} ms, est. blocking ${median(runs.map((r) => r.blocking)).toFixed(0)} ms (after the observed FCP ${median(runs.map((r) => r.blockingAfterFcp)).toFixed(0)}), observed FCP ${median(runs.map((r) => r.fcp)).toFixed(0)} ms`);
    console.log(`  by kind: ${kinds}`);
    const urls = [...new Set(runs.flatMap((r) => Object.keys(r.functions.byScript)))];
    scriptsBySide[g.side] = Object.fromEntries(urls.map((u) => [u, median(runs.map((r) => r.functions.byScript[u] ?? 0))]));
    const withLantern = runs.filter((r) => r.lantern);
    if (withLantern.length) {
      const whats = [...new Set(withLantern.flatMap((r) => Object.keys(r.lantern.byWhat)))];
      const ranked = whats.map((w) => [w, median(withLantern.map((r) => r.lantern.byWhat[w] ?? 0))]).sort((a, b) => b[1] - a[1]);
      console.log(`  Lighthouse's simulated TBT ${median(withLantern.map((r) => r.lantern.tbt)).toFixed(0)} ms (reported: ${withLantern.map((r) => Math.round(r.lantern.reported)).join(', ')}); its shares by what the task ran (median ms):`);
      for (const [w, v] of ranked.slice(0, TOP * 2)) if (v >= 1) console.log(`    ${v.toFixed(0).padStart(6)}  ${w}`);
      lanternBySide[g.side] = Object.fromEntries(ranked);
    }
    // The run whose blocking is the median's: its long tasks, as they were.
    const mid = [...runs].sort((a, b) => a.blocking - b.blocking)[Math.floor((runs.length - 1) / 2)];
    console.log(`  long tasks of the median run (est. blocking ${mid.blocking.toFixed(0)} ms):`);
    for (const t of mid.long.slice(0, TOP)) {
      console.log(`    ${t.duration.toFixed(0).padStart(4)} ms at ${t.start.toFixed(0).padStart(5)} (blocks ${t.blocking.toFixed(0)})${t.afterFcp ? '' : ' before FCP'}: ${t.what}`);
      if (t.split) console.log(`         sampled: ${Object.entries(t.split).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([u, v]) => `${u} ${v.toFixed(0)}`).join(', ')}`);
    }
    for (const kind of ['byScript', 'inclusive', 'self']) {
      const fns = Object.keys(Object.assign({}, ...runs.map((r) => r.functions[kind])));
      if (!fns.length) continue;
      const ranked = fns.map((f) => [f, median(runs.map((r) => r.functions[kind][f] ?? 0))]).sort((a, b) => b[1] - a[1]);
      console.log(`  in the long tasks, ${kind} ms (sampled, median over the traces):`);
      for (const [f, v] of ranked.slice(0, kind === 'inclusive' ? TOP * 3 : TOP * 2)) console.log(`    ${v.toFixed(1).padStart(7)}  ${f}`);
    }
  }
  if (lanternBySide.ours && lanternBySide.ref) {
    const o = lanternBySide.ours;
    const r = lanternBySide.ref;
    const all = [...new Set([...Object.keys(o), ...Object.keys(r)])];
    const diff = (w) => (o[w] ?? 0) - (r[w] ?? 0);
    console.log('\n  simulated TBT by what the task ran, ours vs ref (median ms), largest difference first:');
    for (const w of all.sort((a, b) => Math.abs(diff(b)) - Math.abs(diff(a))).slice(0, TOP * 2)) {
      if (Math.abs(diff(w)) >= 1) console.log(`    ${w.slice(0, 70).padEnd(70)} ours ${(o[w] ?? 0).toFixed(0).padStart(5)}  ref ${(r[w] ?? 0).toFixed(0).padStart(5)}  Δ ${diff(w).toFixed(0)}`);
    }
  }
  const { ours, ref } = scriptsBySide;
  if (ours && ref && Object.keys(ours).length && Object.keys(ref).length) {
    const all = [...new Set([...Object.keys(ours), ...Object.keys(ref)])];
    const diff = (u) => (ours[u] ?? 0) - (ref[u] ?? 0);
    console.log('\n  self time in the long tasks a run, by script, ours vs ref (sampled, ms), largest difference first:');
    for (const u of all.sort((a, b) => Math.abs(diff(b)) - Math.abs(diff(a))).slice(0, TOP)) {
      console.log(`    ${u.padEnd(48)} ours ${(ours[u] ?? 0).toFixed(0).padStart(5)}  ref ${(ref[u] ?? 0).toFixed(0).padStart(5)}  Δ ${diff(u).toFixed(0)}`);
    }
  }
}
