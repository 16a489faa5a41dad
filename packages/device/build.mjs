// Bundles the command (dist/cli.js, executable) and the library (dist/index.js) for Node 22+. The
// workspace's own packages (@latchkey/contract and the zod it uses) are bundled in, so the published
// package needs only what package.json lists: mqtt, @peculiar/x509 and reflect-metadata stay external.
import { chmod, rm } from 'node:fs/promises';
import { build } from 'esbuild';

const EXTERNAL = ['mqtt', '@peculiar/x509', 'reflect-metadata'];

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/cli.ts', 'src/index.ts'],
  outdir: 'dist',
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
await chmod('dist/cli.js', 0o755);
