// Bundles the command (dist/cli.js, executable) and the library (dist/index.js) for Node 22+. The
// workspace's own packages (@latchkey/contract and the zod it uses) are bundled in, so the published
// package needs only what package.json lists: mqtt, @peculiar/x509 and reflect-metadata stay external.
// pack.mjs builds into its own copy with buildDevice(<dir>), leaving this package's dist/ alone.
import { chmod, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const EXTERNAL = ['mqtt', '@peculiar/x509', 'reflect-metadata'];
const here = path.dirname(fileURLToPath(import.meta.url));

export async function buildDevice(outdir = path.join(here, 'dist')) {
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(here, 'src/cli.ts'), path.join(here, 'src/index.ts')],
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    sourcemap: true,
    logLevel: 'warning',
    external: EXTERNAL,
  });
  await chmod(path.join(outdir, 'cli.js'), 0o755);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildDevice();
