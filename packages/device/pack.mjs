// The tarball the platform serves at /downloads/latchkey-device.tgz (apps/api/build.mjs calls this with
// apps/api/dist/downloads): `npm pack` of a copy of this package — dist/ built into the copy, src/ for
// types, the packed manifest — so neither the repository's package.json nor its dist/ is touched. Writes
// <destination>/latchkey-device.tgz and latchkey-device.json ({ version, file }) beside it.
//   node packages/device/pack.mjs <destination>
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildDevice } from './build.mjs';
import { packedManifest } from './pack-manifest.mjs';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
export const DEVICE_TARBALL = 'latchkey-device.tgz';
export const DEVICE_TARBALL_INFO = 'latchkey-device.json';

/** Builds and packs the device package into `destination`; resolves to the tarball's path and version. */
export async function packDevice(destination) {
  const pkg = packedManifest(JSON.parse(await fs.readFile(path.join(here, 'package.json'), 'utf8')));
  // Nothing runs at install or pack time: dist/ is built already.
  delete pkg.scripts;
  delete pkg.devDependencies;
  const staging = await fs.mkdtemp(path.join(os.tmpdir(), 'latchkey-device-pack-'));
  try {
    await buildDevice(path.join(staging, 'dist'));
    await fs.cp(path.join(here, 'src'), path.join(staging, 'src'), { recursive: true });
    await fs.copyFile(path.join(here, 'README.md'), path.join(staging, 'README.md'));
    await fs.writeFile(path.join(staging, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    await fs.mkdir(destination, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { stdout } = await run(npm, ['pack', staging, '--pack-destination', destination, '--json', '--loglevel=error'], { cwd: staging });
    const [{ filename }] = JSON.parse(stdout);
    const file = path.join(destination, DEVICE_TARBALL);
    await fs.rename(path.join(destination, filename), file);
    // Written after the tarball, so a service that reads the version finds the tarball beside it.
    await fs.writeFile(path.join(destination, DEVICE_TARBALL_INFO), `${JSON.stringify({ version: pkg.version, file: DEVICE_TARBALL })}\n`);
    return { file, version: pkg.version };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const destination = path.resolve(process.argv[2] ?? '.');
  const { file, version } = await packDevice(destination);
  console.log(`${file} (@latchkey/device ${version})`);
}
