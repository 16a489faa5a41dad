import fs from 'node:fs';
import path from 'node:path';

const PACKAGE = path.resolve(import.meta.dirname, '..');

/**
 * The `latchkey-device` command as the package builds and ships it (bundled, dist/cli.js), built from the
 * sources as they are now into a directory of its own. It starts in about a third of the CPU time of the
 * sources through tsx, which compiles every module at each start: a test that runs the command several
 * times is then bound by the command's work, not by a busy host's compiling. Built inside the package, so
 * the command finds the dependencies it leaves out of the bundle (they are hoisted to the root).
 */
export async function buildCli(): Promise<{ cli: string; remove: () => void }> {
  fs.mkdirSync(path.join(PACKAGE, 'node_modules'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(PACKAGE, 'node_modules', '.latchkey-device-cli-'));
  const { buildDevice } = (await import(path.join(PACKAGE, 'build.mjs'))) as { buildDevice: (outdir: string) => Promise<void> };
  await buildDevice(dir);
  return { cli: path.join(dir, 'cli.js'), remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
