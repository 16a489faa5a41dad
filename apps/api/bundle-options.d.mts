import type { BuildOptions } from 'esbuild';

/** How the service is bundled (bundle-options.mjs): the shared options, with the caller's on top. */
export function bundleOptions(options: BuildOptions): BuildOptions;
