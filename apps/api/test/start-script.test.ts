import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const script = path.resolve(import.meta.dirname, '../../../scripts/latchkey');

/**
 * scripts/latchkey in a checkout of its own, with an `npm` on PATH that records each call and does what
 * the real one leaves behind (node_modules for ci, the build's outputs for run build), so what the script
 * decides to run is seen without installing or building anything.
 */
let root: string;
let log: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-script-'));
  log = path.join(root, 'npm.log');
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  fs.mkdirSync(path.join(root, 'scripts'));
  fs.copyFileSync(script, path.join(root, 'scripts/latchkey'));
  fs.chmodSync(path.join(root, 'scripts/latchkey'), 0o755);
  write('package.json', '{"name":"latchkey"}\n');
  write('package-lock.json', '{"lockfileVersion":3}\n');
  write('tsconfig.base.json', '{}\n');
  write('packages/device/src/cli.ts', 'export const a = 1;\n');
  write('apps/api/src/main.ts', 'export const b = 1;\n');
  write(
    'bin/npm',
    `#!/bin/sh
echo "$*" >> "${log}"
case "$1" in
  -v) echo 11.0.0 ;;
  ci) rm -rf node_modules && mkdir node_modules ;;
  run)
    if [ "$2" = build ]; then
      [ -n "$FAIL_BUILD" ] && exit 1
      mkdir -p apps/web/dist apps/api/dist/downloads
      touch apps/web/dist/index.html apps/api/dist/main.js apps/api/dist/downloads/latchkey-device.tgz
    fi ;;
esac
`,
  );
  fs.chmodSync(path.join(root, 'bin/npm'), 0o755);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** Runs `scripts/latchkey <command>`; the npm calls it made, and what it said. */
function latchkey(command: string, env: Record<string, string> = {}): Promise<{ code: number; calls: string[]; stderr: string }> {
  fs.rmSync(log, { force: true });
  const PATH = [path.join(root, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(':');
  return new Promise((resolve) => {
    execFile(path.join(root, 'scripts/latchkey'), [command], { cwd: root, env: { PATH, HOME: root, ...env } }, (error, _stdout, stderr) => {
      const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter((c) => c !== '-v') : [];
      resolve({ code: error ? Number(error.code) : 0, calls, stderr });
    });
  });
}

const START = 'run start -w @latchkey/api --';
const CI = 'ci --no-audit --no-fund --loglevel=error';

describe('scripts/latchkey start', () => {
  it('installs and builds the first time, then skips both while nothing changed, and says so', async () => {
    expect((await latchkey('start')).calls).toEqual([CI, 'run build', START]);
    const again = await latchkey('start');
    expect(again.calls).toEqual([START]);
    expect(again.stderr).toContain('package-lock.json unchanged since the last install: skipping npm ci');
    expect(again.stderr).toContain('sources unchanged since the last build: skipping the build');
  });

  it('installs again when package-lock.json changed, and builds again when a source changed', async () => {
    await latchkey('start');
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
    expect((await latchkey('start')).calls).toEqual([CI, 'run build', START]);
    fs.writeFileSync(path.join(root, 'apps/api/src/main.ts'), 'export const b = 2;\n');
    expect((await latchkey('start')).calls).toEqual(['run build', START]);
    fs.writeFileSync(path.join(root, 'packages/device/src/new-file.ts'), 'export const c = 3;\n');
    expect((await latchkey('start')).calls).toEqual(['run build', START]);
    expect((await latchkey('start')).calls).toEqual([START]);
  });

  it('builds again when the build’s outputs are gone, and after a build that failed', async () => {
    await latchkey('start');
    fs.rmSync(path.join(root, 'apps/web/dist'), { recursive: true });
    expect((await latchkey('start')).calls).toEqual(['run build', START]);
    fs.writeFileSync(path.join(root, 'apps/api/src/main.ts'), 'export const b = 3;\n');
    const failed = await latchkey('start', { FAIL_BUILD: '1' });
    expect(failed.code).not.toBe(0);
    expect(failed.calls).toEqual(['run build']);
    expect((await latchkey('start')).calls).toEqual(['run build', START]);
  });

  it('installs again when node_modules was removed', async () => {
    await latchkey('start');
    fs.rmSync(path.join(root, 'node_modules'), { recursive: true });
    expect((await latchkey('start')).calls).toEqual([CI, START]);
  });
});

describe('scripts/latchkey test', () => {
  it('always starts from a clean install', async () => {
    await latchkey('start');
    expect((await latchkey('test')).calls).toEqual([CI, 'test --silent --']);
    expect((await latchkey('test')).calls).toEqual([CI, 'test --silent --']);
  });
});
