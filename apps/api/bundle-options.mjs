/**
 * How the service is bundled, by build.mjs for dist/ and by the tests that start it as a process
 * (test/fixtures/built-service.ts): split into chunks, ESM for Node, workspace packages (@latchkey/*,
 * TypeScript sources) bundled in, every other package left in node_modules.
 * @param {import('esbuild').BuildOptions} options the entry points, outdir and anything else of the caller's
 * @returns {import('esbuild').BuildOptions}
 */
export function bundleOptions(options) {
  return {
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    jsx: 'automatic',
    logLevel: 'warning',
    plugins: [
      {
        name: 'externalize-deps',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@latchkey/') ? undefined : { path: args.path, external: true }));
        },
      },
    ],
    ...options,
  };
}
