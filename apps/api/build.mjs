// Bundles the service into dist/main.js and the key CLI (npm run keys:rotate) into dist/keys.js. Workspace packages (@latchkey/*) are TypeScript sources and get
// bundled in; everything else stays in node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/main.ts', 'src/keys.ts'],
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  jsx: 'automatic',
  logLevel: 'warning',
  plugins: [
    {
      name: 'externalize-deps',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@latchkey/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
