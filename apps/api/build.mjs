// Bundles the service into dist/main.js, the key CLI (npm run keys:rotate) into dist/keys.js and the backup CLI
// into dist/backup-cli.js. Split into chunks: main.js loads the service's chunk only after it has started
// OpenTelemetry (src/tracing.ts, itself a chunk loaded only when traces are on), so pg and http are loaded
// after the instrumentations are in place. Workspace packages (@latchkey/*) are TypeScript sources and get
// bundled in; everything else stays in node_modules. Then the device package's tarball, which the service
// serves at /downloads/latchkey-device.tgz for `npm install -g` on a lock's controller (dist/downloads).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { packDevice } from '../../packages/device/pack.mjs';
import { bundleOptions } from './bundle-options.mjs';

await build(bundleOptions({ entryPoints: ['src/main.ts', 'src/keys.ts', 'src/backup-cli.ts'], outdir: 'dist', sourcemap: true }));
await packDevice(fileURLToPath(new URL('./dist/downloads/', import.meta.url)));
