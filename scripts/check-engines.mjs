#!/usr/bin/env node
// The repository's Node floor covers every locked package: the lowest Node that the root's and each
// workspace's `engines.node` allows satisfies the `engines.node` of every package in package-lock.json
// (otherwise `npm ci` on that Node warns EBADENGINE, or a package fails at run time). Run by `npm test`.
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const root = path.resolve(import.meta.dirname, '..');
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
const own = ['', ...(lock.packages[''].workspaces ?? [])];
const problems = [];
for (const ws of own) {
  const range = JSON.parse(fs.readFileSync(path.join(root, ws, 'package.json'), 'utf8')).engines?.node;
  if (!range) {
    // A workspace without its own range runs under the root's.
    if (!ws) problems.push('package.json: no engines.node');
    continue;
  }
  const floor = semver.minVersion(range);
  for (const [name, pkg] of Object.entries(lock.packages)) {
    const needs = pkg.engines?.node;
    if (typeof needs !== 'string' || !name) continue;
    // One platform's prebuilt binary among several (sharp's for 32-bit Windows says ^20.9.0): optional, and
    // left out where it does not fit.
    if (pkg.optional && (pkg.os || pkg.cpu)) continue;
    if (!semver.satisfies(floor, needs)) problems.push(`${ws || 'root'} allows Node ${floor} (${range}), but ${name} needs ${needs}`);
  }
}
for (const p of problems) console.error(p);
console.log(problems.length ? `engines: ${problems.length} problem(s)` : `engines: every locked package runs on the declared Node floor`);
process.exit(problems.length ? 1 : 0);
