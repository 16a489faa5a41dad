import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The service as `npm start` runs it (src/main.ts), started with umask 000 — where PGlite alone makes its
 * files 0666 — on a DATA_DIR an earlier start left 0755 with a mail file 0644: once it is up, DATA_DIR is
 * 0700 and nothing in it (the embedded database, the outbox) is readable by group or others.
 */
const apiDir = path.resolve(import.meta.dirname, '..');
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups.reverse()) c();
});

/** Every entry under `dir` whose mode lets group or others in, with its mode. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const visit = (entry: string) => {
    const stat = fs.lstatSync(entry);
    if (stat.isSymbolicLink()) return;
    if (stat.mode & 0o077) found.push(`${path.relative(dir, entry) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) visit(path.join(entry, name));
  };
  visit(dir);
  return found;
}

describe.skipIf(process.env.TEST_DB_KIND === 'postgres')('data at rest', { timeout: 120_000 }, () => {
  it('the service makes DATA_DIR and everything in it owner-only, whatever the umask it was started with', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-at-rest-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    fs.chmodSync(dataDir, 0o755);
    fs.mkdirSync(path.join(dataDir, 'outbox'), { mode: 0o755 });
    fs.chmodSync(path.join(dataDir, 'outbox'), 0o755);
    fs.writeFileSync(path.join(dataDir, 'outbox', 'earlier.json'), '{}');
    fs.chmodSync(path.join(dataDir, 'outbox', 'earlier.json'), 0o644);

    const child = spawn('sh', ['-c', 'umask 000 && exec "$0" --import tsx src/main.ts', process.execPath], {
      cwd: apiDir,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_SECONDS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    cleanups.push(() => void child.kill('SIGKILL'));
    let output = '';
    const started = new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += d.toString();
        if (output.includes('Latchkey portal:')) resolve();
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', seen);
      void exited.then((code) => reject(new Error(`the service exited (${code}) before it started:\n${output}`)));
    });
    await started;
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    expect(fs.existsSync(path.join(dataDir, 'pgdata'))).toBe(true);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(openToOthers(dataDir)).toEqual([]);
    expect(output).toMatch(/Made \d+ files and folders in .* owner-only/);
  });
});
