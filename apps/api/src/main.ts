import { loadConfig } from './config.js';
import { ownerOnlyFiles, secureDataDir } from './lib/private-data.js';

/**
 * The entry point: traces first when configured (src/tracing.ts must be in place before pg and http are
 * loaded), then the service (src/server.ts). The bundle splits here (apps/api/build.mjs), so with tracing
 * off nothing of OpenTelemetry is loaded.
 */
const config = loadConfig();
// Everything written from here on (the embedded database, keys, uploads, the mail outbox) is the owner's
// only, and DATA_DIR is tightened if an earlier start left it readable by others.
ownerOnlyFiles();
const warn = (message: string) => console.warn(`Warning: ${message}`);
const tightened = secureDataDir(config.dataDir, warn);
if (tightened > 0) console.warn(`Made ${tightened} files and folders in ${config.dataDir} owner-only: they were readable by other users of this host.`);
if (config.tracing.endpoint) {
  const { startTracing } = await import('./tracing.js');
  startTracing(config.tracing);
}
const { run } = await import('./server.js');
await run(config);
// PGlite sets the modes of the files it makes itself (0666 at its first start, whatever the umask): DATA_DIR
// (0700) keeps others out of them already, and those files are made owner-only as well.
secureDataDir(config.dataDir, warn);
